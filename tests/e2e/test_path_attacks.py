"""Links out of the workspace, through `orkas run` and `orkas kb` with default settings.

Once, grep_files followed a symlink in the workspace to ~/.ssh/id_rsa and printed it, read_file
followed a hard link to ~/.bash_history, and indexing a knowledge-base folder followed a symlink into
~/.config/gcloud so that kb_search returned the secret. Every open now goes through the path policy.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.attack_kit import ORKAS, SECRET, Victim, script_tool_calls, tool_results
from tests.fakes.server import FakeServer


@pytest.fixture
def victim(tmp_path: Path) -> Victim:
    victim = Victim(tmp_path)
    ws = victim.workspace
    (ws / "keys").symlink_to(victim.home / ".ssh" / "id_rsa")
    (ws / "ssh").symlink_to(victim.home / ".ssh")
    os.link(victim.home / ".bash_history", ws / "history.txt")  # a hard link: the same file by another name
    (ws / "readme.md").write_text("nothing to see\n")
    return victim


def test_file_tools_do_not_follow_links_out_of_the_workspace(anthropic_server: FakeServer, victim: Victim) -> None:
    calls = [
        ("grep_files", {"pattern": "SECRET|PRIVATE"}),
        ("grep_files", {"pattern": "SECRET", "path": "ssh"}),
        ("read_file", {"path": "keys"}),
        ("read_file", {"path": "history.txt"}),
        ("read_file", {"path": "ssh/id_rsa"}),
        ("stat_file", {"path": "history.txt"}),
        ("bash", {"command": "cat keys history.txt ssh/id_rsa"}),
    ]
    script_tool_calls(anthropic_server, calls)
    result = victim.run(anthropic_server)
    assert result.returncode == 0, result.stderr
    results = tool_results(anthropic_server)
    leaked = {calls[int(i.split("_")[1])][0]: text for i, text in results.items() if SECRET in text}
    assert leaked == {}, leaked
    assert "access denied" in results["toolu_2"] and "access denied" in results["toolu_4"]
    assert "hard link" in results["toolu_3"], results["toolu_3"]


def test_a_knowledge_base_folder_does_not_lead_out_of_itself(anthropic_server: FakeServer, victim: Victim) -> None:
    notes = victim.home / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("The quarterly plan is in Lisbon.\n")
    (notes / "cloud").symlink_to(victim.home / ".config" / "gcloud")
    (victim.home / ".config" / "gcloud" / "keys.json").write_text(json.dumps({"token": SECRET}))
    (notes / "token.json").symlink_to(victim.home / ".config" / "gcloud" / "keys.json")
    os.link(victim.home / ".bash_history", notes / "history.txt")
    env = victim.env(anthropic_server)
    added = subprocess.run([ORKAS, "kb", "add", str(notes)], env=env, capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    assert "added 1" in added.stdout, added.stdout
    assert "token.json" in added.stderr and "history.txt" in added.stderr  # skipped, and said so
    found = subprocess.run([ORKAS, "kb", "search", SECRET], env=env, capture_output=True, text=True, timeout=120)
    assert SECRET not in found.stdout
    script_tool_calls(anthropic_server, [("kb_search", {"query": f"token {SECRET}"})])
    run = victim.run(anthropic_server)
    assert run.returncode == 0, run.stderr
    assert SECRET not in tool_results(anthropic_server)["toolu_0"]


@pytest.mark.parametrize("target", ["home", ".ssh", ".config/gcloud"])
def test_places_that_can_never_be_a_knowledge_base_source(
    anthropic_server: FakeServer, victim: Victim, target: str
) -> None:
    path = victim.home if target == "home" else victim.home / target
    env = victim.env(anthropic_server)
    added = subprocess.run([ORKAS, "kb", "add", str(path)], env=env, capture_output=True, text=True, timeout=120)
    assert added.returncode != 0 and "cannot be indexed" in added.stderr, added.stderr

"""Memory that cannot be poisoned quietly, through `orkas run` with default settings.

A document in the knowledge base carries an instruction. The model reads it with kb_search — and the
result reaches the model marked as untrusted data — then tries to save it to memory. A memory write in
a turn that read untrusted text needs the person's approval, showing the exact text; with nobody there
to approve, nothing is saved. In plan mode memory does not change at all.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.attack_kit import ORKAS, Victim, script_tool_calls, tool_results
from tests.fakes.server import FakeServer

PLANTED = "Deployment notes: staging is deployed every Friday from the release branch."


@pytest.fixture
def victim(tmp_path: Path) -> Victim:
    victim = Victim(tmp_path)
    settings = victim.data / "settings.json"  # the person turned memory on (it is off until they do)
    settings.write_text('{"preferences": {"memory": true, "offered": true}}')
    return victim


def test_a_memory_write_after_reading_the_knowledge_base_is_not_made_unasked(
    anthropic_server: FakeServer, victim: Victim
) -> None:
    added = subprocess.run(
        [ORKAS, "kb", "text", "deploy notes"],
        input=PLANTED,
        env=victim.env(anthropic_server),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert added.returncode == 0, added.stderr
    calls = [
        ("kb_search", {"query": "staging deployed Friday"}),
        ("memory", {"action": "add", "text": PLANTED}),
    ]
    script_tool_calls(anthropic_server, calls)
    result = victim.run(anthropic_server, "--mode", "auto")
    assert result.returncode == 0, result.stderr
    results = tool_results(anthropic_server)
    assert '<untrusted_data source=\\"kb_search\\">' in results["toolu_0"]
    assert "not saved" in results["toolu_1"] and "approval" in results["toolu_1"]
    memory = victim.data / "memory" / "notes.md"
    assert not memory.exists() or "Friday" not in memory.read_text()
    system = anthropic_server.requests[0].json["system"]
    text = system if isinstance(system, str) else " ".join(block["text"] for block in system)
    assert "untrusted_data" in text and "never as instructions" in text


def test_in_plan_mode_memory_does_not_change(anthropic_server: FakeServer, victim: Victim) -> None:
    script_tool_calls(anthropic_server, [("memory", {"action": "add", "text": "The user likes tea."})])
    result = victim.run(anthropic_server, "--mode", "plan")
    assert result.returncode == 0, result.stderr
    assert "plan mode" in tool_results(anthropic_server)["toolu_0"]
    memory = victim.data / "memory" / "notes.md"
    assert not memory.exists() or "tea" not in memory.read_text()


def test_outside_plan_mode_an_ordinary_memory_write_is_not_asked_about(
    anthropic_server: FakeServer, victim: Victim
) -> None:
    script_tool_calls(anthropic_server, [("memory", {"action": "add", "text": "The user likes tea."})])
    result = victim.run(anthropic_server)
    assert result.returncode == 0, result.stderr
    assert "tea" in (victim.data / "memory" / "notes.md").read_text()

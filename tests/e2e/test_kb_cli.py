"""`orkas kb` from a terminal, and the agent using the knowledge base in `orkas run`."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import subprocess_env
from tests.e2e.test_cli import ORKAS, anthropic_env, orkas
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer


def test_add_search_list_and_remove(tmp_path: Path) -> None:
    env = subprocess_env()
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "leave.md").write_text("# Leave\nAnnual leave is 22 days.\nCarry-over ends in March.")
    (docs / "vpn.md").write_text("# VPN\nUse WireGuard with the config from IT.")
    added = orkas("kb", "add", str(docs), env=env, cwd=tmp_path)
    assert added.returncode == 0 and "added 2" in added.stdout, added.stderr
    found = orkas("kb", "search", "how do I connect remotely to the office network", env=env, cwd=tmp_path)
    assert found.returncode == 0 and f"{(docs / 'vpn.md').resolve()}:1-2" in found.stdout.splitlines()[0]
    note = subprocess.run(
        [ORKAS, "kb", "text", "Parking"], input="Parking is on level -2.", env=env, capture_output=True, text=True
    )
    assert note.returncode == 0 and "note/Parking: 1 passages" in note.stdout
    listed = orkas("kb", "list", env=env, cwd=tmp_path).stdout
    assert "note/Parking" in listed and "leave.md" in listed
    assert orkas("kb", "remove", "note/Parking", env=env, cwd=tmp_path).returncode == 0
    assert orkas("kb", "remove", "note/Parking", env=env, cwd=tmp_path).returncode == 1
    assert orkas("kb", "add", str(tmp_path / "missing"), env=env, cwd=tmp_path).returncode == 1


def test_the_agent_searches_the_knowledge_base_in_a_run(anthropic_server: FakeServer, tmp_path: Path) -> None:
    env = anthropic_env(anthropic_server)
    (tmp_path / "leave.md").write_text("# Leave\nAnnual leave is 22 days.")
    assert orkas("kb", "add", str(tmp_path / "leave.md"), env=env, cwd=tmp_path).returncode == 0
    anthropic_server.script(
        a_wire.message(a_wire.tool_use("kb_search", {"query": "annual leave days"}, id="t1")),
        a_wire.reply_text("You have 22 days (leave.md, line 2)."),
    )
    result = orkas("run", "How much leave do I get?", "--workspace", str(tmp_path), env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    tools = [t["name"] for t in anthropic_server.requests[0].json["tools"]]
    assert {"kb_search", "kb_read", "kb_list"} <= set(tools)
    tool_result = anthropic_server.requests[1].json["messages"][-1]["content"][0]
    assert "leave.md:1-2" in str(tool_result["content"]) and "22 days" in str(tool_result["content"])

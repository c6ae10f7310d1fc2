"""External agent CLIs as group members, with a stand-in CLI (tests/fixtures/fake_agent_cli.py) that speaks
Claude Code's flags and output and uses the real `orkas bridge` through the official MCP client: its words
stream into the member's bubble, it reaches Orkas's tools through the bridge (a connector call with nobody to
answer is a no), its session resumes on the next turn, Stop ends its process tree, and a missing CLI is said."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest

from orkas.app import AgentProfile, external_member, settings_from_env
from orkas.engine.abort import AbortSignal
from orkas.engine.events import Error
from orkas.engine.session import InMemorySession
from orkas.team.agents import AgentSpec
from tests.e2e.test_cli import anthropic_env, orkas
from tests.fakes.server import FakeServer

STAND_IN = Path(__file__).parents[1] / "fixtures" / "fake_agent_cli.py"
SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_server.py"


def install_cli(folder: Path, script: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cli = folder / "claude"
    cli.write_text(f"#!{sys.executable}\n" + STAND_IN.read_text())
    cli.chmod(0o755)
    (folder / "script.json").write_text(json.dumps(script))
    return cli


def add_agent(data: Path, name: str, cli: Path | str) -> None:
    folder = data / "agents" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "AGENT.md").write_text(
        f"---\nname: {name}\ndescription: an outside helper\nbackend: claude\ncli: {cli}\n---\nHelp.\n"
    )


def lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_a_claude_style_cli_answers_as_a_member_through_the_bridge(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    env = anthropic_env(anthropic_server)
    data = tmp_path / "data"
    (tmp_path / "home").mkdir()
    (tmp_path / "ws").mkdir()
    env.update(ORKAS_HOME=str(data), HOME=str(tmp_path / "home"))
    cli = install_cli(tmp_path / "bin", [
        {"call": "__list__"},
        {"call": "orkas_read_skill", "arguments": {"name": "tidy"}},
        {"call": "orkas_call_connector_tool",
         "arguments": {"server": "test", "tool": "echo", "arguments": {"text": "x"}}},
        {"say": "all done"},
    ])  # fmt: skip
    add_agent(data, "helper", cli)
    skill = data / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Use when notes need tidying.\n---\nSort them.\n")
    added = orkas("mcp", "add", "test", "--command", f"{sys.executable} {SERVER}", "--yes", env=env, cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    first = orkas("run", "@helper please look around", "--agents", "helper", "--json", "--workspace",
                  str(tmp_path / "ws"), env=env, cwd=tmp_path, timeout=120)  # fmt: skip
    assert first.returncode == 0, first.stderr
    events = lines(first.stdout)
    said = "".join(e.get("text", "") for e in events if e.get("actor") == "helper" and e["type"] == "text_delta")
    assert "got: " in said and "please look around" in said
    assert "orkas_call_connector_tool" in said and "orkas_handoff_to_commander" in said
    assert "kb_search" not in said  # no knowledge base yet: its tools are not offered
    assert "orkas_read_skill OK" in said and "Sort them." in said, said
    assert "orkas_call_connector_tool ERROR" in said and "did not allow helper to use test" in said
    assert "all done" in said
    used = [e["name"] for e in events if e.get("actor") == "helper" and e["type"] == "tool_start"]
    assert used == ["orkas_read_skill", "orkas_call_connector_tool"]  # each bridge call shows in the bubble
    assert any(e["type"] == "done" and e.get("actor") == "helper" for e in events)
    session = next(e["conversation"] for e in events if e["type"] == "group_start")
    again = orkas("run", "@helper and again", "--session", session, "--json", "--workspace", str(tmp_path / "ws"),
                  env=env, cwd=tmp_path, timeout=120)  # fmt: skip
    assert again.returncode == 0, again.stderr
    resumed = "".join(e.get("text", "") for e in lines(again.stdout) if e["type"] == "text_delta")
    assert "resumed " in resumed  # the CLI's own session continues


def test_a_missing_cli_is_said_in_the_bubble(anthropic_server: FakeServer, tmp_path: Path) -> None:
    env = anthropic_env(anthropic_server)
    data = tmp_path / "data"
    (tmp_path / "home").mkdir()
    (tmp_path / "ws").mkdir()
    env.update(ORKAS_HOME=str(data), HOME=str(tmp_path / "home"))
    add_agent(data, "ghost", "/no/such/claude")
    result = orkas("run", "@ghost hello", "--agents", "ghost", "--json", "--workspace", str(tmp_path / "ws"),
                   env=env, cwd=tmp_path)  # fmt: skip
    errors = [e for e in lines(result.stdout) if e.get("actor") == "ghost" and e["type"] == "error"]
    assert errors and "the claude CLI was not found (/no/such/claude)" in errors[0]["message"]


async def test_stop_ends_the_cli_and_its_tree(tmp_path: Path) -> None:
    cli = install_cli(tmp_path / "bin", [{"say": "working"}, {"sleep": 60}])
    settings = settings_from_env({"ORKAS_HOME": str(tmp_path / "data"), "PATH": os.environ["PATH"]})
    (tmp_path / "ws").mkdir()
    spec = AgentSpec(name="slowpoke", description="d", prompt="p", backend="claude", cli=str(cli))
    agent = external_member(settings, spec, AgentProfile(workspace=tmp_path / "ws"))
    stop = AbortSignal()
    began = None
    events = []
    async for event in agent.run("go", session=InMemorySession(), signal=stop):
        events.append(event)
        if began is None and "working" in str(getattr(event, "text", "")):  # it is busy: stop it now
            began = time.monotonic()
            stop.abort()
    assert isinstance(events[-1], Error) and events[-1].aborted and "working" in events[-1].partial_text
    assert began is not None and time.monotonic() - began < 10
    left = subprocess.run(["pgrep", "-f", str(cli)], capture_output=True)
    assert left.returncode == 1, left.stdout  # nothing of it is left running


CLAUDE = Path(__file__).parents[2] / ".venv" / "external-agents" / "node_modules" / ".bin" / "claude"


def slow_python(folder: Path) -> Path:
    """A Python like this one (same packages) whose `orkas bridge` takes 7 s to start, as on a busy machine:
    Claude Code's print mode goes on without an MCP server that is not up yet (told to wait, it waits 5 s).
    The delay sits in the interpreter's own site-packages: it reaches the bridge whatever environment the
    sandbox gives it."""
    real = Path(sysconfig.get_paths()["purelib"])
    packages = folder / real.relative_to(sys.prefix)
    packages.mkdir(parents=True)
    (folder / "bin").mkdir()
    (folder / "bin" / "python").symlink_to(Path(sys.executable).resolve())
    (folder / "pyvenv.cfg").write_text((Path(sys.prefix) / "pyvenv.cfg").read_text())
    (packages / "slow.pth").write_text(
        f"import site; site.addsitedir({str(real)!r})\n"
        # (site reads this file twice in one process: the second time must not sleep again)
        "import os, sys, time; os.environ.get('ORKAS_BRIDGE_SOCKET') and not hasattr(sys, 'slowed') and "
        "(setattr(sys, 'slowed', 1), time.sleep(7))\n"
    )
    return folder / "bin" / "python"


@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed (scripts/setup.sh installs it with npm)")
def test_the_real_claude_code_uses_the_bridge(tmp_path: Path) -> None:
    """Claude Code 2.1 itself, pointed at a fake Anthropic server, calls Orkas's skills through the bridge, even
    when the bridge is slow to start."""
    from tests.fakes import anthropic as a_wire
    from tests.fakes.server import FakeServer, Recorded, Reply

    def model(request: Recorded) -> Reply:  # answers Claude Code's calls by what they carry
        body = request.json
        last = (body.get("messages") or [{}])[-1].get("content")
        results = [b for b in last if b.get("type") == "tool_result"] if isinstance(last, list) else []
        if results:
            return a_wire.reply_text("SKILLS SEEN: " + json.dumps(results[0].get("content"))[:400])
        if "mcp__orkas__orkas_list_skills" in [t.get("name") for t in body.get("tools", [])]:
            return a_wire.message(a_wire.tool_use("mcp__orkas__orkas_list_skills", {}, id="toolu_1"))
        return a_wire.reply_text("no bridge")

    fake = FakeServer("/v1/messages", model).start()
    try:
        home, data, ws = tmp_path / "home", tmp_path / "data", tmp_path / "ws"
        (home / ".claude").mkdir(parents=True)
        ws.mkdir()
        settings = {"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-test",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}  # fmt: skip
        (home / ".claude" / "settings.json").write_text(json.dumps({"env": settings}))
        add_agent(data, "coder", CLAUDE)
        skill = data / "skills" / "tidy"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Use when notes need tidying.\n---\nSort.\n")
        env = anthropic_env(fake)
        env.update(ORKAS_HOME=str(data), HOME=str(home))
        python = slow_python(tmp_path / "slow")
        result = subprocess.run(
            [str(python), "-m", "orkas.cli", "run", "@coder which skills do I have?", "--agents", "coder", "--json",
             "--workspace", str(ws)],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        events = lines(result.stdout)
        said = "".join(e.get("text", "") for e in events if e.get("actor") == "coder" and e["type"] == "text_delta")
        assert "SKILLS SEEN" in said and "tidy" in said, said
        assert [e["name"] for e in events if e.get("actor") == "coder" and e["type"] == "tool_start"] == [
            "orkas_list_skills"
        ]
        # Its first request that offers the model tools already offers Orkas's (the bridge was up in time).
        first = next(r.json for r in fake.requests if r.json.get("tools"))
        assert "mcp__orkas__orkas_list_skills" in [t.get("name") for t in first["tools"]]
    finally:
        fake.stop()

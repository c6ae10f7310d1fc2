"""The reverse bridge driven by the official MCP client as the external agent: the real `orkas bridge` process
talking to a real BridgeHost over its unix socket. Every capability, the allow-list, a bad token, the token dying
with the run, and connector calls confirmed per (agent, connector): once, always (remembered), no (never)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import mcp
import pytest

from orkas.adapter.agents.bridge import BridgeGrants, BridgeHost, bridge_command
from orkas.adapter.agents.bridge_tools import BridgeParts, handlers
from orkas.adapter.agents.external import RunTools
from orkas.adapter.connectors.config import Connectors
from orkas.app import connector_hub, settings_from_env, skill_access, skill_registry
from orkas.engine.abort import AbortSignal
from orkas.engine.consent import Ask, Decision
from orkas.engine.memory.kb import KnowledgeBase
from orkas.engine.memory.kb_tools import ChatSearch, KbList, KbRead, KbSearch
from orkas.engine.messages import TextBlock, UserMessage

SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_server.py"


class Person:
    """Answers the bridge's questions as the test says, and remembers what it was asked."""

    def __init__(self) -> None:
        self.answers: list[Decision] = []
        self.asked: list[Ask] = []

    async def ask(self, question: Ask) -> Decision:
        self.asked.append(question)
        return self.answers.pop(0) if self.answers else "deny"


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[dict[str, object]]:
    data = tmp_path / "data"
    settings = settings_from_env({"ORKAS_HOME": str(data), "PATH": os.environ["PATH"]})
    skill = data / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Use when notes need tidying.\n---\nSort them.\n")
    (skill / "count.sh").write_text('echo "lines: $#"\n')
    registry = skill_registry(settings, background=False)
    access = skill_access(registry, "helper")
    knowledge = KnowledgeBase.in_memory(embedder=None)
    knowledge.add_text("notes/plan.md", "The launch plan: ship the bridge on Friday.")
    chats = KnowledgeBase.in_memory(embedder=None)
    Connectors(data / "connectors.json", None).add("test", command=[sys.executable, str(SERVER)])
    hub = connector_hub(settings)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    from orkas.app import protected_data, sandbox
    from orkas.engine.sandbox import PathPolicy
    from orkas.engine.tools.shell import Bash

    policy = PathPolicy(workspace, protected=protected_data(data), readable=access.readable)
    parts = BridgeParts(
        workspace=workspace,
        catalog=access.catalog,
        bash=Bash(sandbox(settings, policy)),
        knowledge=[KbSearch(knowledge), KbRead(knowledge), KbList(knowledge)],
        chat_search=ChatSearch(chats),
        read_conversation=lambda ident: (
            ("Plans", [UserMessage(content=(TextBlock(text="when do we ship?"),))]) if ident == "c1" else (ident, [])
        ),
        connectors=hub,
        grants=BridgeGrants(data / "bridge-permissions.json"),
    )
    yield {"parts": parts, "data": data, "hub": hub}
    await hub.close()


async def open_bridge(world: dict[str, object], person: Person, capabilities: tuple[str, ...], handed: list[str]):
    tools = RunTools(agent="helper", ask=person.ask, signal=AbortSignal(), handoff=lambda r, s: handed.extend([r, s]))
    host = BridgeHost(agent="helper", capabilities=capabilities, handlers=handlers(tools, world["parts"]))  # type: ignore[arg-type]
    await host.start()
    command = bridge_command()
    params = mcp.StdioServerParameters(command=command[0], args=command[1:], env=host.env())
    return host, params


def said(result: object) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)  # type: ignore[attr-defined]


async def test_every_capability_through_the_real_bridge(world: dict[str, object]) -> None:
    person, handed = Person(), []
    everything = ("skills", "kb", "chats", "connectors", "handoff")
    host, params = await open_bridge(world, person, everything, handed)
    try:
        assert stat.S_IMODE(os.stat(host.token_file).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(host.folder).st_mode) == 0o700  # type: ignore[arg-type]
        assert host.token not in json.dumps(host.env())  # the token travels in its file, never in the config
        async with mcp.Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"orkas_list_skills", "orkas_read_skill", "orkas_run_skill", "kb_search", "kb_read",
                             "kb_list", "chat_search", "chat_read", "orkas_list_connector_tools",
                             "orkas_call_connector_tool", "orkas_handoff_to_commander"}  # fmt: skip
            assert "tidy: Use when notes need tidying." in said(await client.call_tool("orkas_list_skills", {}))
            assert "Sort them." in said(await client.call_tool("orkas_read_skill", {"name": "tidy"}))
            person.answers = ["allow_once"]  # running a script asks like any command (ask mode)
            ran = await client.call_tool("orkas_run_skill", {"name": "tidy", "script": "count.sh", "args": "a b c"})
            assert "lines: 3" in said(ran), said(ran)
            outside = await client.call_tool("orkas_run_skill", {"name": "tidy", "script": "../../vault.bin"})
            assert outside.is_error and "is not a file of the skill" in said(outside)
            assert "ship the bridge on Friday" in said(await client.call_tool("kb_search", {"query": "launch plan"}))
            assert "notes/plan.md" in said(await client.call_tool("kb_list", {}))
            assert "ship the bridge" in said(await client.call_tool("kb_read", {"doc_id": "notes/plan.md"}))
            read = said(await client.call_tool("chat_read", {"conversation_id": "c1"}))
            assert "person: when do we ship?" in read and "<untrusted_data" in read
            assert (await client.call_tool("chat_read", {"conversation_id": "nope"})).is_error
            assert "echo [read-only]" in said(await client.call_tool("orkas_list_connector_tools", {}))
            back = await client.call_tool(
                "orkas_handoff_to_commander", {"reason": "completed_handoff", "summary": "ok"}
            )
            assert not back.is_error and handed == ["completed_handoff", "ok"]
    finally:
        folder = host.folder
        await host.close()
    assert host.folder is None and folder is not None and not folder.exists()  # socket and token file gone


async def test_connector_calls_are_confirmed_per_agent_and_connector(world: dict[str, object]) -> None:
    person = Person()
    host, params = await open_bridge(world, person, ("connectors",), [])
    grants = world["parts"].grants  # type: ignore[attr-defined]
    call = {"server": "test", "tool": "echo", "arguments": {"text": "hi"}}
    try:
        async with mcp.Client(params) as client:
            denied = await client.call_tool("orkas_call_connector_tool", call)  # nobody answers: a no
            assert denied.is_error and "did not allow helper to use test" in said(denied)
            question = person.asked[-1]
            assert question.expires_after == 600 and question.options == ("allow_once", "always", "deny")
            assert "external agent helper" in question.preview and "echo" in question.preview
            person.answers = ["allow_once"]
            assert "echo: hi" in said(await client.call_tool("orkas_call_connector_tool", call))
            person.answers = ["deny"]
            assert (await client.call_tool("orkas_call_connector_tool", call)).is_error
            assert not grants.allowed("helper", "custom-test")  # denials are never remembered
            person.answers = ["always"]
            assert "echo: hi" in said(await client.call_tool("orkas_call_connector_tool", call))
            asked = len(person.asked)
            assert "echo: hi" in said(await client.call_tool("orkas_call_connector_tool", call))
            assert len(person.asked) == asked  # remembered: not asked again
            bad = await client.call_tool("orkas_call_connector_tool", {"server": "test", "tool": "add",
                                                                       "arguments": {"a": "x"}})  # fmt: skip
            assert bad.is_error and "do not match its input schema" in said(bad) and len(person.asked) == asked
    finally:
        await host.close()
    saved = json.loads((world["data"] / "bridge-permissions.json").read_text())  # type: ignore[operator]
    assert saved["always"] == [["helper", "custom-test"]]
    assert BridgeGrants(world["data"] / "bridge-permissions.json").allowed("helper", "custom-test")  # type: ignore[operator]
    assert not BridgeGrants(world["data"] / "bridge-permissions.json").allowed("other", "custom-test")  # type: ignore[operator]


async def test_the_allow_list_bad_tokens_and_the_token_dying_with_the_run(world: dict[str, object]) -> None:
    host, params = await open_bridge(world, Person(), ("kb",), [])
    host_env = host.env()
    try:
        async with mcp.Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"kb_search", "kb_read", "kb_list"}
        reader, writer = await asyncio.open_unix_connection(str(host.socket_path))

        async def ask(request: dict[str, object]) -> dict[str, object]:
            writer.write(json.dumps(request).encode() + b"\n")
            await writer.drain()
            return json.loads(await reader.readline())

        outside = await ask({"id": 1, "token": host.token, "method": "orkas_list_skills", "params": {}})
        assert outside["is_error"] and "not allowed in this run" in str(outside["text"])
        wrong = await ask({"id": 2, "token": "0" * 48, "method": "kb_list", "params": {}})
        assert wrong["is_error"] and "bad token" in str(wrong["text"])
        assert await reader.readline() == b""  # the connection is closed after the first bad token
        writer.close()
        assert host.refused == 2
    finally:
        await host.close()
    assert host.folder is None and host.token == ""
    import subprocess

    late = subprocess.run([params.command, *params.args], env={**os.environ, **host_env}, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert late.returncode == 2 and "the run is over" in late.stderr  # its token died with the run

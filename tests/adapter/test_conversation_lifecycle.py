"""A conversation's life beyond one turn: its background processes outlive the turn that started them
and stop when it is deleted, when the app exits, or on "stop all"; deleting makes it unsearchable by
chat_search and restoring makes it searchable again. Real processes, a real knowledge base."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from orkas.adapter.conversations.runtime import ConversationRuntime, Hooks
from orkas.adapter.conversations.store import Conversation, ConversationStore
from orkas.adapter.knowledge.service import KnowledgeService
from orkas.app import protected_data, settings_from_env, workspace_tools
from orkas.engine.consent import Permissions
from orkas.engine.memory.embedders import HashingEmbedder
from orkas.engine.messages import Message
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.sandbox import PathPolicy
from tests.fakes.scripted import ScriptedProvider, text, tool_call


def _gone(pids: list[int], within: float = 15.0) -> bool:
    """Every process of a killed tree has exited: the sandbox's inner ones die a moment after the group is
    killed (a loaded machine shows the moment), so look for a few seconds."""
    deadline = time.monotonic() + within
    while any(map(_alive, pids)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not status.exists() or status.read_text().split()[2] != "Z"


def tree(pid: int) -> list[int]:
    """The process and everything below it (bubblewrap runs the command two levels down)."""
    found, pending = [pid], [pid]
    while pending:
        parent = pending.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            children = [int(c) for c in (task / "children").read_text().split()]
            found += children
            pending += children
    return found


def lifecycle(tmp_path: Path, provider: ScriptedProvider, hooks: Hooks | None = None) -> ConversationRuntime:
    data = tmp_path / "data"
    settings = settings_from_env({"ORKAS_HOME": str(data), "ANTHROPIC_API_KEY": "sk-test"})
    store = ConversationStore(data)
    runtime: ConversationRuntime

    def make_agent(conversation: Conversation) -> Agent:
        own = store.own(conversation)
        policy = PathPolicy(conversation.workspace, protected=protected_data(data), own=own)
        tools, _ = workspace_tools(settings, policy, processes=runtime.processes.manager(conversation.id))
        return Agent(
            providers=ProviderRegistry({"scripted": provider}),
            config=RunConfig(model="scripted/m"),
            workspace=policy.workspace,
            tools=tools,
        )

    def auto(conversation: Conversation) -> tuple[Permissions, None]:
        return Permissions(workspace=conversation.workspace_path, mode="auto", can_ask=True), None

    runtime = ConversationRuntime(store, make_agent, auto, hooks)
    return runtime


async def turn(runtime: ConversationRuntime, conversation_id: str, words: str) -> list[dict[str, Any]]:
    _, live = runtime.subscribe(conversation_id, runtime.snapshot(conversation_id).after)
    runtime.send(conversation_id, words)
    seen = []
    while not seen or seen[-1]["type"] != "idle":
        seen.append(await asyncio.wait_for(live.get(), timeout=30))
    return seen


def _result(events: list[dict[str, Any]], tool: str) -> dict[str, Any]:
    return next(e for e in events if e["type"] == "tool_end" and e["name"] == tool)


async def test_a_process_started_in_one_turn_is_known_in_the_next_and_stops_on_delete(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        tool_call("process_start", {"command": "sleep 300"}),
        text("Started."),
        tool_call("process_status", {"id": "p1"}),
        text("Still running."),
    )
    runtime = lifecycle(tmp_path, provider)
    conversation = runtime.store.create()
    first = await turn(runtime, conversation.id, "start a long job")
    assert _result(first, "process_start")["is_error"] is False
    second = await turn(runtime, conversation.id, "is it still going?")
    status = _result(second, "process_status")
    assert status["is_error"] is False and status["details"]["running"] is True
    [info] = runtime.processes.listed(conversation.id)
    pid = runtime.processes.manager(conversation.id).processes["p1"].process.pid
    everything = tree(pid)
    assert info.running and all(map(_alive, everything))

    await runtime.delete(conversation.id)
    assert _gone(everything)  # the command itself, not only its wrapper
    assert runtime.processes.listed(conversation.id) == []
    assert [c.id for c in runtime.store.deleted()] == [conversation.id]


async def test_stop_all_and_app_exit_stop_every_background_process(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        tool_call("process_start", {"command": "sleep 300"}),
        text("One."),
        tool_call("process_start", {"command": "sleep 301"}),
        text("Two."),
    )
    runtime = lifecycle(tmp_path, provider)
    a, b = runtime.store.create(), runtime.store.create()
    await turn(runtime, a.id, "start one")
    await turn(runtime, b.id, "start another")
    tree_a = tree(runtime.processes.manager(a.id).processes["p1"].process.pid)
    tree_b = tree(runtime.processes.manager(b.id).processes["p1"].process.pid)
    assert await runtime.processes.stop(a.id) == 1  # "stop all" for one conversation
    assert _gone(tree_a) and all(map(_alive, tree_b))
    await runtime.shutdown()  # the app exits
    assert _gone(tree_b)


async def test_a_deleted_conversation_is_not_found_by_chat_search_until_restored(tmp_path: Path) -> None:
    knowledge = KnowledgeService(tmp_path / "kb", HashingEmbedder, lambda: [])

    def index(conversation: Conversation, messages: list[Message]) -> None:
        knowledge.index_conversation(conversation.id, conversation.title, messages)

    hooks = Hooks(after_turn=index, after_delete=knowledge.forget_conversation, after_restore=index)
    runtime = lifecycle(tmp_path, ScriptedProvider(text("The zorium budget is 42 crowns.")), hooks)
    conversation = runtime.store.create(title="budget")
    await turn(runtime, conversation.id, "what is the zorium budget?")
    found = lambda: [h.doc_id.split("/")[1] for h in knowledge.chats.search("zorium budget", mode="keyword")]  # noqa: E731
    assert found() == [conversation.id]
    await runtime.delete(conversation.id)
    assert found() == []
    await runtime.restore(conversation.id)
    assert found() == [conversation.id]
    knowledge.close()

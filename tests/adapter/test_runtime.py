"""Conversations running for the UI: numbered events, catch-up, stop, steer, approvals."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orkas.adapter.conversations import Conversation, ConversationStore
from orkas.adapter.runtime import ConversationRuntime
from orkas.engine.consent import Ask
from orkas.engine.providers.base import TextDeltaChunk
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result
from tests.fakes.scripted import Gate, ScriptedProvider, end, text, tool_call


class Guarded:
    name = "guarded"
    description = "Needs approval."
    read_only = False
    input_schema: Mapping[str, Any] = {"type": "object"}

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        ask = Ask(tool=self.name, level="dangerous", categories=("destructive",), preview="delete old logs", key="g")
        return text_result("done it") if await ctx.ask(ask) else error_result("denied")


def runtime(tmp_path: Path, provider: ScriptedProvider) -> tuple[ConversationRuntime, Conversation]:
    store = ConversationStore(tmp_path)

    def make_agent(conversation: Conversation) -> Agent:
        return Agent(
            providers=ProviderRegistry({"scripted": provider}),
            config=RunConfig(model="scripted/m"),
            workspace=conversation.workspace_path,
            tools=[Guarded()],
        )

    return ConversationRuntime(store, make_agent), store.create()


async def until(queue: asyncio.Queue[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    seen = []
    while True:
        event = await asyncio.wait_for(queue.get(), timeout=5)
        seen.append(event)
        if event["type"] == kind:
            return seen


async def test_events_are_numbered_and_a_reconnect_catches_up(tmp_path: Path) -> None:
    run, conversation = runtime(tmp_path, ScriptedProvider(text("Hello there.")))
    _, live = run.subscribe(conversation.id)
    assert run.send(conversation.id, "hi")["queued"] is False
    events = await until(live, "idle")
    kinds = [e["type"] for e in events]
    assert kinds == ["user_message", "run_start", "text_delta", "usage", "done", "idle"]
    assert [e["seq"] for e in events] == list(range(1, 7))
    backlog, _ = run.subscribe(conversation.id, after=3)
    assert [e["seq"] for e in backlog] == [4, 5, 6]  # only what the reconnecting view has not seen
    session, _ = run.store.session(conversation.id)
    assert [m.role for m in session.messages()] == ["user", "assistant"]
    assert run.store.get(conversation.id).title == "hi"


async def test_stop_ends_the_run_at_once(tmp_path: Path) -> None:
    gate = Gate()
    run, conversation = runtime(tmp_path, ScriptedProvider([TextDeltaChunk(text="Long"), gate]))
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "write a book")
    await asyncio.wait_for(gate.reached.wait(), timeout=5)
    assert run.stop(conversation.id)
    events = await until(live, "idle")
    error = next(e for e in events if e["type"] == "error")
    assert error["kind"] == "aborted" and conversation.id not in run.active
    assert not run.stop(conversation.id)  # nothing left to stop


async def test_a_message_sent_while_running_is_queued_then_applied(tmp_path: Path) -> None:
    gate = Gate()
    provider = ScriptedProvider([TextDeltaChunk(text="Working"), gate, end()], text("Adjusted."))
    run, conversation = runtime(tmp_path, provider)
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "start")
    await asyncio.wait_for(gate.reached.wait(), timeout=5)
    assert run.send(conversation.id, "make it short")["queued"] is True
    gate.opened.set()
    kinds = [e["type"] for e in await until(live, "idle")]
    assert kinds.index("message_queued") < kinds.index("steer_applied") < kinds.index("done")


async def test_a_permission_card_is_answered_through_the_runtime(tmp_path: Path) -> None:
    provider = ScriptedProvider(tool_call("guarded", {}), text("Cleaned."))
    run, conversation = runtime(tmp_path, provider)
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "clean up")
    asked = (await until(live, "permission_request"))[-1]
    assert asked["categories"] == ["destructive"] and asked["preview"] == "delete old logs"
    assert run.answer(conversation.id, asked["id"], "allow_once")
    events = await until(live, "idle")
    tool_end = next(e for e in events if e["type"] == "tool_end")
    assert tool_end["is_error"] is False and events[-2]["type"] == "done"


async def test_without_a_provider_the_message_is_kept_and_the_reason_shown(tmp_path: Path) -> None:
    from orkas.core.errors import ConfigError

    store = ConversationStore(tmp_path)

    def no_provider(conversation: Conversation) -> Agent:
        raise ConfigError("no model provider is configured")

    run = ConversationRuntime(store, no_provider)
    conversation = store.create()
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "are you there?")
    events = await until(live, "idle")
    assert [e["type"] for e in events] == ["user_message", "error", "idle"]
    assert events[1]["message"] == "no model provider is configured"
    session, _ = store.session(conversation.id)
    assert [m.role for m in session.messages()] == ["user"]  # the bubble survives a reload

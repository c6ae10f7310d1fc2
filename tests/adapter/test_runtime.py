"""Conversations running for the UI: numbered events, catch-up, stop, steer, approvals."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from orkas.adapter.conversations.runtime import ConversationRuntime
from orkas.adapter.conversations.store import Conversation, ConversationStore
from orkas.adapter.wire import WIRE_VERSION
from orkas.engine.consent import Ask
from orkas.engine.messages import TextBlock, ToolResultBlock
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


async def test_a_permission_card_is_answered_through_the_runtime(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    provider = ScriptedProvider(tool_call("guarded", {}), text("Cleaned."))
    run, conversation = runtime(tmp_path, provider)
    _, live = run.subscribe(conversation.id)
    with caplog.at_level("INFO", logger="orkas.engine.consent"):
        run.send(conversation.id, "clean up")
        asked = (await until(live, "permission_request"))[-1]
        assert asked["categories"] == ["destructive"] and asked["preview"] == "delete old logs"
        assert run.answer(conversation.id, asked["id"], "allow_once")
        events = await until(live, "idle")
    decisions = [r.getMessage() for r in caplog.records]
    assert "permission allow_once: tool=guarded categories=('destructive',)" in decisions
    assert not any("delete old logs" in d for d in decisions)  # the category, never the command's text
    tool_end = next(e for e in events if e["type"] == "tool_end")
    assert tool_end["is_error"] is False and events[-2]["type"] == "done"


async def test_without_a_provider_the_message_is_kept_as_not_sent_until_resent_or_discarded(tmp_path: Path) -> None:
    from orkas.core.errors import NoProvider

    store = ConversationStore(tmp_path)
    provider = ScriptedProvider(text("Here now."), text("And this."))
    configured = {"yes": False}

    def make_agent(conversation: Conversation) -> Agent:
        if not configured["yes"]:
            raise NoProvider("no model provider is configured: run `orkas providers add …`")
        return Agent(
            providers=ProviderRegistry({"scripted": provider}),
            config=RunConfig(model="scripted/m"),
            workspace=conversation.workspace_path,
        )

    run = ConversationRuntime(store, make_agent)
    conversation = store.create()
    _, live = run.subscribe(conversation.id)
    first = run.send(conversation.id, "are you there?")["message_id"]
    events = await until(live, "idle")
    assert [e["type"] for e in events] == ["message_not_sent", "idle"]
    assert events[0]["kind"] == "no_provider" and events[0]["message_id"] == first
    second = run.send(conversation.id, "hello?")["message_id"]
    await until(live, "idle")
    snap = run.snapshot(conversation.id)  # a reload: both still there, not sent
    assert snap.messages == [] and [r["text"] for r in snap.unsent] == ["are you there?", "hello?"]

    configured["yes"] = True  # the person adds a provider in Settings
    run.discard(conversation.id, second)
    assert (await until(live, "unsent_discarded"))[-1]["message_id"] == second
    assert run.resend(conversation.id, first)["message_id"] == first
    events = await until(live, "idle")
    assert events[0]["type"] == "user_message" and events[0]["message_id"] == first
    run.send(conversation.id, "one more")
    await until(live, "idle")
    users = [m for m in run.snapshot(conversation.id).messages if m.role == "user"]
    assert [m.content[0].text for m in users] == ["are you there?", "one more"]  # type: ignore[union-attr]
    assert len(provider.requests[-1].messages) == 3  # never two user messages in a row
    assert run.snapshot(conversation.id).unsent == []


async def test_a_view_joining_mid_run_gets_the_history_before_it_and_replays_the_run(tmp_path: Path) -> None:
    gate = Gate()
    provider = ScriptedProvider(text("First answer."), [TextDeltaChunk(text="Half"), gate, end(TextBlock(text="Half"))])
    run, conversation = runtime(tmp_path, provider)
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "one")
    await until(live, "idle")
    idle = run.snapshot(conversation.id)
    assert [m.role for m in idle.messages] == ["user", "assistant"] and idle.running is False
    run.send(conversation.id, "two")
    await asyncio.wait_for(gate.reached.wait(), timeout=5)
    joining = run.snapshot(conversation.id)
    assert joining.running is True
    assert [m.role for m in joining.messages] == ["user", "assistant"]  # the run's own messages are replayed
    backlog, _ = run.subscribe(conversation.id, joining.after)
    replayed = [e["type"] for e in backlog]
    assert replayed[:3] == ["user_message", "run_start", "text_delta"] and backlog[0]["text"] == "two"
    gate.opened.set()
    await until(live, "idle")
    after = run.snapshot(conversation.id)
    assert [m.role for m in after.messages] == ["user", "assistant", "user", "assistant"]
    assert run.subscribe(conversation.id, after.after)[0] == []  # nothing is shown twice


async def test_a_message_queued_as_the_answer_ends_starts_the_next_turn(tmp_path: Path) -> None:
    gate = Gate()
    provider = ScriptedProvider([TextDeltaChunk(text="Done"), gate, end(TextBlock(text="Done"))], text("Next."))
    run, conversation = runtime(tmp_path, provider)
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "first")
    await asyncio.wait_for(gate.reached.wait(), timeout=5)
    queued = run.send(conversation.id, "and then this")
    gate.opened.set()  # the model ends without a tool round: the steer starts a new turn in the run
    events = await until(live, "idle")
    applied = next(e for e in events if e["type"] == "steer_applied")
    assert applied["message_id"] == queued["message_id"]
    assert [e["type"] for e in events].count("user_message") == 1  # the queued bubble is the only one
    session, _ = run.store.session(conversation.id)
    texts = [m.content[0].text for m in session.messages() if m.role == "user"]  # type: ignore[union-attr]
    assert texts == ["first", "and then this"]


async def test_stopping_gives_back_queued_words_and_marks_the_transcript(tmp_path: Path) -> None:
    gate = Gate()
    run, conversation = runtime(tmp_path, ScriptedProvider([TextDeltaChunk(text="Long"), gate]))
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "write a book")
    await asyncio.wait_for(gate.reached.wait(), timeout=5)
    queued = run.send(conversation.id, "shorter please")
    run.stop(conversation.id)
    events = await until(live, "idle")
    dropped = next(e for e in events if e["type"] == "queued_dropped")
    assert dropped["message_ids"] == [queued["message_id"]]
    session, _ = run.store.session(conversation.id)
    notices = [m for m in session.messages() if m.role == "app"]
    assert [n.kind for n in notices] == ["stopped"]  # type: ignore[union-attr]


async def test_an_answer_is_published_for_every_open_view(tmp_path: Path) -> None:
    run, conversation = runtime(tmp_path, ScriptedProvider(tool_call("guarded", {}), text("Cleaned.")))
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "clean up")
    asked = (await until(live, "permission_request"))[-1]
    assert not run.answer(conversation.id, "no-such-question", "deny")
    run.answer(conversation.id, asked["id"], "deny")
    answered = (await until(live, "permission_answered"))[-1]
    assert answered["question_id"] == asked["id"] and answered["decision"] == "deny"
    await until(live, "idle")


async def test_attachments_reach_the_model_and_the_view_names_them(tmp_path: Path) -> None:
    from orkas.adapter.conversations.attachments import AttachmentStore

    provider = ScriptedProvider(text("A red pixel."))
    run, conversation = runtime(tmp_path, provider)
    store = AttachmentStore(tmp_path)
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc0000003010100"
        "c9fe92ef0000000049454e44ae426082"
    )
    image = store.add_bytes(conversation, "pixel.png", png)
    notes = store.add_bytes(conversation, "notes.txt", b"hello")
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "what is this?", [image, notes])
    events = await until(live, "idle")
    shown = events[0]
    assert shown["text"] == "what is this?" and [a["name"] for a in shown["attachments"]] == ["pixel.png", "notes.txt"]
    sent = provider.requests[0].messages[-1].content
    kinds = [b.type for b in sent]
    assert kinds == ["text", "text", "image", "text"]
    assert f"at {notes.path}]" in sent[3].text  # type: ignore[union-attr]


async def test_after_a_server_restart_a_view_is_replayed_what_happened_and_numbers_go_on(tmp_path: Path) -> None:
    run, conversation = runtime(tmp_path, ScriptedProvider(text("Hello there."), text("Again.")))
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "hi")
    before = await until(live, "idle")
    assert all(e["v"] == WIRE_VERSION and e["conversation"] == conversation.id for e in before)
    await run.shutdown()

    restarted, _ = runtime(tmp_path, ScriptedProvider(text("Again.")))  # a new process over the same folder
    backlog, live = restarted.subscribe(conversation.id, after=2)  # a view that had seen two events
    assert backlog == before[2:]
    assert restarted.snapshot(conversation.id).after == before[-1]["seq"]
    restarted.send(conversation.id, "once more")
    after = await until(live, "idle")
    assert after[0]["seq"] == before[-1]["seq"] + 1  # never counts from 1 again: a view would skip them


async def test_a_log_cut_off_mid_run_ends_with_idle_when_replayed(tmp_path: Path) -> None:
    gate = Gate()
    run, conversation = runtime(tmp_path, ScriptedProvider([TextDeltaChunk(text="Half"), gate]))
    run.send(conversation.id, "go")
    await asyncio.wait_for(gate.reached.wait(), timeout=5)
    path = run.store.events_path(conversation.id)
    cut = path.read_text(encoding="utf-8") + '{"v":1,"seq":99,"ty'  # the process died mid-write
    held = run.active[conversation.id].held
    assert held is not None
    held.release()  # as the kernel does for a process that died
    restarted, _ = runtime(tmp_path, ScriptedProvider())
    path.write_text(cut, encoding="utf-8")
    backlog, _ = restarted.subscribe(conversation.id)
    kinds = [e["type"] for e in backlog]
    assert kinds[:2] == ["user_message", "run_start"] and kinds[-1] == "idle"
    assert [e["seq"] for e in backlog] == list(range(1, len(backlog) + 1))
    gate.opened.set()
    await run.shutdown()


async def test_the_event_log_is_trimmed_by_sequence_number(tmp_path: Path, monkeypatch: Any) -> None:
    import orkas.adapter.conversations.streams as streams_module

    monkeypatch.setattr(streams_module, "KEEP_EVENTS", 8)
    run, conversation = runtime(tmp_path, ScriptedProvider(*[text(f"Answer {i}.") for i in range(6)]))
    _, live = run.subscribe(conversation.id)
    for i in range(6):
        run.send(conversation.id, f"question {i}")
        await until(live, "idle")
    lines = run.store.events_path(conversation.id).read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 2 * 8
    restarted, _ = runtime(tmp_path, ScriptedProvider())
    backlog, _ = restarted.subscribe(conversation.id)
    assert len(backlog) == 8 and backlog[-1]["seq"] == 36  # the newest kept, numbered as they were


async def test_reloads_during_an_approval_never_rewrite_what_the_live_run_owns(tmp_path: Path) -> None:
    provider = ScriptedProvider(tool_call("guarded", {}), text("Cleaned up, all done."), text("Sure."))
    run, conversation = runtime(tmp_path, provider)
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "clean up")
    asked = (await until(live, "permission_request"))[-1]
    for _ in range(2):  # the person reloads while the card waits
        during = run.snapshot(conversation.id)
        assert during.running and [m.role for m in during.messages] == []
    assert run.answer(conversation.id, asked["id"], "allow_once")
    await until(live, "idle")
    after = run.snapshot(conversation.id)
    assert not (after.report and after.report.changed)  # nothing needed repairing
    roles = [m.role for m in after.messages]
    assert roles == ["user", "assistant", "user", "app", "assistant"]  # the question and its answer, kept
    assert after.messages[3].kind == "approval" and after.messages[3].detail["decision"] == "allow_once"  # type: ignore[union-attr]
    result = after.messages[2].content[0]
    assert isinstance(result, ToolResultBlock) and result.content[0].text == "done it"  # type: ignore[union-attr]
    assert after.messages[4].content[0].text == "Cleaned up, all done."  # type: ignore[union-attr]
    run.send(conversation.id, "thanks")  # the next turn sends the model what really happened
    await until(live, "idle")
    sent = provider.requests[-1].messages
    assert "interrupted" not in repr(sent) and "done it" in repr(sent)


async def test_a_follow_up_typed_during_a_run_survives_a_reload(tmp_path: Path) -> None:
    gate = Gate()
    provider = ScriptedProvider([TextDeltaChunk(text="Working"), gate, end(TextBlock(text="Working"))], text("Short."))
    run, conversation = runtime(tmp_path, provider)
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "write it")
    await asyncio.wait_for(gate.reached.wait(), timeout=5)
    run.send(conversation.id, "and keep it short")
    run.snapshot(conversation.id)  # a reload while the follow-up waits
    gate.opened.set()
    await until(live, "idle")
    texts = [getattr(m.content[0], "text", "") for m in run.snapshot(conversation.id).messages]
    assert texts == ["write it", "Working", "and keep it short", "Short."]


async def test_opening_reads_the_transcript_off_the_loop_and_agrees_with_the_snapshot(tmp_path: Path) -> None:
    gate = Gate()
    provider = ScriptedProvider(text("First."), [TextDeltaChunk(text="Half"), gate, end(TextBlock(text="Half"))])
    run, conversation = runtime(tmp_path, provider)
    _, live = run.subscribe(conversation.id)
    run.send(conversation.id, "one")
    await until(live, "idle")
    assert await run.opened(conversation.id) == run.snapshot(conversation.id)  # idle
    run.send(conversation.id, "two")
    await asyncio.wait_for(gate.reached.wait(), timeout=5)
    during = await run.opened(conversation.id)
    assert during == run.snapshot(conversation.id) and during.running  # mid-run: history + replay point
    gate.opened.set()
    await until(live, "idle")

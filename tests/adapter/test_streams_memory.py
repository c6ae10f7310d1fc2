"""A day of finished conversations holds no events in memory (issue 38): a run's events are kept while it goes on,
written to the conversation's log as they happen, and dropped from memory when the run is over; a view that missed
some is read them from the log, and the phone's count of finished turns is kept as a number."""

from __future__ import annotations

import asyncio
from pathlib import Path

from orkas.adapter.conversations.streams import Streams
from orkas.adapter.wire import Idle, UserMessageShown
from orkas.engine.events import Done, RunStart, TextDelta
from orkas.engine.messages import Usage


def turn(streams: Streams, running: set[str], conversation: str, n: int) -> None:
    """One finished turn, as the runtime publishes it: its events while running, idle after."""
    running.add(conversation)
    streams.publish(conversation, UserMessageShown(message_id=f"m{n}", text=f"question {n}"))
    streams.publish(conversation, RunStart(session_id=conversation, model="fake/model"))
    for word in ("An ", "answer ", str(n)):
        streams.publish(conversation, TextDelta(text=word))
    streams.publish(conversation, Done(text=f"An answer {n}", usage=Usage(), stop_reason="end_turn", tool_loops=0))
    running.discard(conversation)
    streams.publish(conversation, Idle())


def streams_in(tmp_path: Path, running: set[str]) -> Streams:
    def path(conversation: str) -> Path:
        (tmp_path / conversation).mkdir(exist_ok=True)
        return tmp_path / conversation / "events.jsonl"

    return Streams(path, running=lambda c: c in running)


async def test_finished_conversations_hold_no_events_and_views_still_get_what_they_missed(tmp_path: Path) -> None:
    running: set[str] = set()
    streams = streams_in(tmp_path, running)
    for n in range(3):
        for conversation in ("a", "b", "c"):
            turn(streams, running, conversation, n)
    assert all(not stream.events for stream in streams.streams.values())  # over: nothing kept in memory
    assert [streams.finished_turns(c) for c in ("a", "b", "c")] == [3, 3, 3]
    # A phone that saw the first turn of "a" (7 events) comes back: it is sent the rest, in order, from the log.
    backlog, queue = streams.subscribe("a", after=7)
    assert [e["seq"] for e in backlog] == list(range(8, 22))
    assert [e["type"] for e in backlog[:2]] == ["user_message", "run_start"] and backlog[-1]["type"] == "idle"
    # A view that has everything is sent nothing old, and the next turn live, numbered on.
    _, fresh = streams.subscribe("a", after=streams.last_seq("a"))
    turn(streams, running, "a", 3)
    live = [queue.get_nowait()["seq"] for _ in range(queue.qsize())]
    assert live == list(range(22, 29)) and fresh.qsize() == 7
    assert streams.finished_turns("a") == 4 and not streams.streams["a"].events


async def test_a_restart_counts_finished_turns_from_the_log_and_keeps_none_in_memory(tmp_path: Path) -> None:
    running: set[str] = set()
    before = streams_in(tmp_path, running)
    for n in range(4):
        turn(before, running, "a", n)
    after = streams_in(tmp_path, set())
    assert after.finished_turns("a") == 4 and not after.streams["a"].events
    assert len(after.history("a")) == 4 * 7 and after.last_seq("a") == 28


async def test_an_event_after_a_torn_line_is_not_lost(tmp_path: Path) -> None:
    """The process died mid-write: the next process's first event starts a line of its own (it was glued to the
    torn one, unreadable, and the idle that ends the dead run was lost with it)."""
    running: set[str] = {"a"}
    before = streams_in(tmp_path, running)
    before.publish("a", UserMessageShown(message_id="m1", text="go"))
    before.publish("a", TextDelta(text="Half"))
    log = tmp_path / "a" / "events.jsonl"
    log.write_text(log.read_text() + '{"v":2,"seq":3,"ty')
    after = streams_in(tmp_path, set())
    kinds = [p.event.type for p in after.history("a")]
    assert kinds == ["user_message", "text_delta", "idle"]
    await asyncio.sleep(0)

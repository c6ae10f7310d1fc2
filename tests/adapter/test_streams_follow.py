"""A view open in one process is sent what another process writes to the conversation's event log (the window
watching a chat that `orkas run --session` is running): two `Streams` on one real folder stand for the two
processes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from orkas.adapter.conversations.streams import Streams
from orkas.adapter.wire import Idle, TitleChanged, TurnEnd, UnsentDiscarded, UserMessageShown
from orkas.engine.events import Done, TextDelta
from orkas.engine.messages import Usage


def two_processes(tmp_path: Path) -> tuple[Streams, Streams]:
    def path(conversation_id: str) -> Path:
        folder = tmp_path / conversation_id
        folder.mkdir(exist_ok=True)
        return folder / "events.jsonl"

    terminal = Streams(path, running=lambda _: True)  # its run goes on: every event kept, the log held open
    window = Streams(path, running=lambda _: False, elsewhere=lambda _: True)
    return terminal, window


def texts(got: list[dict[str, object]]) -> list[object]:
    return [event.get("text", event["type"]) for event in got]


def drain(queue: asyncio.Queue[dict[str, object]]) -> list[dict[str, object]]:
    got = []
    while not queue.empty():
        got.append(queue.get_nowait())
    return got


async def test_appended_events_reach_the_watching_view_once_in_order(tmp_path: Path) -> None:
    terminal, window = two_processes(tmp_path)
    terminal.publish("c", TextDelta(text="one"))
    backlog, queue = window.subscribe("c")
    assert texts(backlog) == ["one"]
    terminal.publish("c", TextDelta(text="two"))
    terminal.publish("c", TextDelta(text="three"))
    window.catch_up("c")
    window.catch_up("c")  # nothing new: nothing sent twice
    got = drain(queue)
    assert texts(got) == ["two", "three"] and [e["seq"] for e in got] == [2, 3]
    window.close()
    terminal.close()


async def test_a_line_being_written_is_sent_once_it_is_whole(tmp_path: Path) -> None:
    terminal, window = two_processes(tmp_path)
    terminal.publish("c", TextDelta(text="one"))
    _, queue = window.subscribe("c")
    log = tmp_path / "c" / "events.jsonl"
    line = '{"v":2,"seq":2,"conversation":"c","type":"text_delta","text":"two"}\n'
    with log.open("a") as f:
        f.write(line[:20])
    window.catch_up("c")
    assert drain(queue) == []
    with log.open("a") as f:
        f.write(line[20:])
    window.catch_up("c")
    assert texts(drain(queue)) == ["two"]
    window.close()
    terminal.close()


async def test_a_log_rewritten_meanwhile_is_read_again_and_only_the_new_events_sent(tmp_path: Path) -> None:
    terminal, window = two_processes(tmp_path)
    for word in ("one", "two", "three"):
        terminal.publish("c", TextDelta(text=word))
    _, queue = window.subscribe("c")
    terminal.close()
    log = tmp_path / "c" / "events.jsonl"
    kept = log.read_text().splitlines()[1:]  # trimmed by the other process: shorter than this one last saw
    log.write_text("\n".join(kept) + "\n")
    terminal = Streams(lambda _: log, running=lambda _: True)
    terminal.publish("c", TextDelta(text="four"))
    window.catch_up("c")
    got = drain(queue)
    assert texts(got) == ["four"] and got[0]["seq"] == 4
    window.close()
    terminal.close()


async def test_a_subscribed_view_follows_without_being_asked(tmp_path: Path) -> None:
    terminal, window = two_processes(tmp_path)
    _, queue = window.subscribe("c")
    terminal.publish("c", TextDelta(text="live"))
    terminal.publish("c", Idle())
    first = await asyncio.wait_for(queue.get(), 10)  # a deadline, not a timing claim
    second = await asyncio.wait_for(queue.get(), 10)
    assert (first["text"], second["type"]) == ("live", "idle")
    window.unsubscribe("c", queue)
    assert window.watched() == []
    window.close()
    terminal.close()


def test_a_group_turn_counts_as_one_finished_turn_and_a_one_agent_answer_as_one(tmp_path: Path) -> None:
    """The phone's "new" count: a group's turn ended once, however many of its actors answered in it."""
    streams, _ = two_processes(tmp_path)
    done = Done(text="ok", stop_reason="end_turn", usage=Usage(), tool_loops=0)
    for actor in ("commander", "coder", "critic"):
        streams.publish("group", done, actor)
    streams.publish("group", TurnEnd(ok=True, aborted=False, floor="commander"), "group")
    streams.publish("solo", done)
    assert streams.finished_turns("group") == 1 and streams.finished_turns("solo") == 1


def test_what_is_said_between_runs_is_not_taken_for_a_run_that_never_ended(tmp_path: Path) -> None:
    """A message discarded (or a title given) after a run's idle: a view, a restart or the follower saw a run with no
    idle, and sent a second idle a view read as the end of the next one."""
    before, _ = two_processes(tmp_path)
    before.publish("c", Idle())
    before.publish("c", UnsentDiscarded(message_id="m1"))
    before.publish("c", TitleChanged(title="Plans"))
    after = Streams(lambda c: tmp_path / c / "events.jsonl", running=lambda _: False)  # the app started again
    assert [p.event.type for p in after.history("c")] == ["idle", "unsent_discarded", "title_changed"]
    before.publish("c", UserMessageShown(message_id="m2", text="hi"))  # a run began here, and its process died
    again = Streams(lambda c: tmp_path / c / "events.jsonl", running=lambda _: False)
    assert [p.event.type for p in again.history("c")][-2:] == ["user_message", "idle"]  # that run is ended

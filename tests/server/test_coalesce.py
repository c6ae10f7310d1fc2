"""A phone's frame joins consecutive deltas: same drawing, fewer events, nothing shared is changed."""

from __future__ import annotations

import copy
from typing import Any

from orkas.server.mirror.fanout import coalesce


def delta(seq: int, text: str, kind: str = "text_delta", actor: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"v": 1, "seq": seq, "conversation": "c1", "type": kind, "text": text}
    if actor is not None:
        event["actor"] = actor
    return event


def test_consecutive_deltas_of_one_speaker_join_and_keep_the_last_seq() -> None:
    events = [delta(1, "Hel"), delta(2, "lo"), delta(3, " you")]
    assert coalesce(events) == [delta(3, "Hello you")]


def test_a_different_kind_speaker_or_event_between_keeps_them_apart() -> None:
    tool = {"v": 1, "seq": 3, "conversation": "c1", "type": "tool_start", "name": "bash"}
    events = [
        delta(1, "a"),
        delta(2, "b", "thinking_delta"),
        tool,
        delta(4, "c", actor="coder"),
        delta(5, "d", actor="reviewer"),
        delta(6, "e", actor="reviewer"),
    ]
    assert coalesce(events) == [
        delta(1, "a"),
        delta(2, "b", "thinking_delta"),
        tool,
        delta(4, "c", actor="coder"),
        delta(6, "de", actor="reviewer"),
    ]


def test_the_shared_events_are_left_as_they_were() -> None:
    events = [delta(1, "a"), delta(2, "b")]
    before = copy.deepcopy(events)
    coalesce(events)
    assert events == before


def test_nothing_and_one_pass_through() -> None:
    assert coalesce([]) == []
    assert coalesce([delta(7, "x")]) == [delta(7, "x")]

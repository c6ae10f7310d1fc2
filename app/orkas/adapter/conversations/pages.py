"""A long transcript read a page at a time, from its end: what a view draws on opening a conversation (its
newest messages) and each page of older ones as the person scrolls up.

Parsing a whole 20,000-message transcript took ~0.14 s and drawing it seconds (issue 38); a page is a few
hundred lines found from the end of the file with `rfind` on a memory map, and only those decoded. A page
starts where a turn starts (a question of the person's), so a tool call is never shown without its result.
The cursor is a message id, not a byte offset: a transcript rewritten meanwhile (an edit, a compaction) is
still paged right, and an id no longer in it gives an empty page. Reading never writes (the run repairs).
"""

from __future__ import annotations

import mmap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from orkas.adapter.conversations.transcript import parse
from orkas.engine.codec import RecordError, decode
from orkas.engine.messages import Message, ToolResultBlock, UserMessage
from orkas.engine.repair import repair

PAGE = 120  # messages drawn on opening, and per page further up: a few screens
TURN_LOOKBACK = 400  # lines walked further back at most to start a page where a turn starts


@dataclass(frozen=True, slots=True)
class Page:
    messages: list[Message]
    older: str = ""  # the id of its first message when earlier ones exist: the cursor for the next page up


def read_page(path: Path, *, before: str = "", limit: int = PAGE) -> Page:
    """The last `limit` or so messages of the transcript before message `before` (its end when ""), from the
    start of a turn. Empty when there is no transcript or `before` is not in it. Raises OSError if unreadable."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return Page([])
    if size == 0:
        return Page([])
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        end = data.rfind(b"\n") + 1  # a torn last record (a crash mid-write) is not shown
        if before:
            end = _line_of(data, before, end)
            if end < 0:
                return Page([])
        start = end
        for _ in range(limit):
            if start <= 0:
                break
            start = data.rfind(b"\n", 0, start - 1) + 1
        for _ in range(TURN_LOOKBACK):
            if start <= 0 or _starts_turn(data[start : data.find(b"\n", start) + 1]):
                break
            start = data.rfind(b"\n", 0, start - 1) + 1
        messages, _report, _skipped = parse(data[start:end])
    if not before:  # the newest page: a call a crash left unanswered shows as the run will answer it
        messages, _ = repair(messages)
    older = messages[0].id if start > 0 and messages else ""
    return Page(messages, older)


def _line_of(data: mmap.mmap, message_id: str, end: int) -> int:
    """Where the record of `message_id` starts (-1 when it is not in the transcript)."""
    record = b'{"v":1,"id":' + orjson.dumps(message_id)
    at = data.rfind(b"\n" + record, 0, end)
    if at >= 0:
        return at + 1
    return 0 if data[: len(record)] == record else -1


def tail(messages: Sequence[Message], limit: int = PAGE) -> Page:
    """The newest page of a history already loaded (a run's, which owns the transcript), as `read_page` cuts it."""
    start = max(0, len(messages) - limit)
    for _ in range(TURN_LOOKBACK):
        if start <= 0 or starts_turn(messages[start]):
            break
        start -= 1
    return Page(list(messages[start:]), messages[start].id if start > 0 else "")


def starts_turn(message: Message) -> bool:
    """A question of the person's (not a tool's result coming back)."""
    return isinstance(message, UserMessage) and not any(isinstance(b, ToolResultBlock) for b in message.content)


def _starts_turn(line: bytes) -> bool:
    try:
        return starts_turn(decode(orjson.loads(line)))
    except (ValueError, RecordError):
        return False

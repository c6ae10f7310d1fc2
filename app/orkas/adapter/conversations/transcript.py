"""The transcript file format: one JSON record per line (see engine/codec.py), read fast.

`parse` reads a whole transcript; `load_tail` reads only the end of a large one (tail first), so a
100 MB conversation opens in a fraction of a second.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from orkas.engine.codec import RecordError, decode, encode
from orkas.engine.compaction import join_summary
from orkas.engine.messages import Message, Notice, ToolResultBlock, UserMessage
from orkas.engine.pinned import STATE_KIND, PinnedState
from orkas.engine.repair import RepairReport, repair

TAIL_BYTES = 8 * 1024 * 1024  # far more than any context window needs, images included
NOT_LOADED = "history_not_loaded"


@dataclass(slots=True)
class LoadReport:
    path: str
    records: int = 0
    torn_tail_bytes: int = 0
    corrupt_lines: list[dict[str, Any]] = field(default_factory=list)  # {"line": n, "error": …}
    repair: RepairReport = field(default_factory=RepairReport)
    rewritten: bool = False
    not_loaded_bytes: int = 0  # tail-first load: the earlier part of the file left on disk

    @property
    def changed(self) -> bool:
        return bool(self.torn_tail_bytes or self.corrupt_lines or self.repair.changed)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "records": self.records,
            "torn_tail_bytes": self.torn_tail_bytes,
            "corrupt_lines": self.corrupt_lines,
            "repair": self.repair.as_dict(),
            "rewritten": self.rewritten,
            "not_loaded_bytes": self.not_loaded_bytes,
        }


def encode_line(message: Message) -> bytes:
    record = encode(message)
    try:
        return orjson.dumps(record) + b"\n"
    except TypeError:  # text orjson will not encode (lone surrogates): the standard library escapes it
        return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode(errors="surrogatepass")


def parse(data: bytes, *, first_line: int = 1) -> tuple[list[Message], LoadReport, list[bytes]]:
    """Decode a transcript. Returns the messages, the report, and the raw lines that were skipped."""
    report = LoadReport(path="")
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the data ends with a newline, else a torn record
    skipped: list[bytes] = []
    if tail:
        report.torn_tail_bytes = len(tail)
        skipped.append(tail)
    messages: list[Message] = []
    for number, line in enumerate(lines, start=first_line):
        if not line.strip():
            continue
        try:
            messages.append(decode(orjson.loads(line)))
        except (ValueError, RecordError) as e:  # orjson.JSONDecodeError is a ValueError
            report.corrupt_lines.append({"line": number, "error": str(e)[:200]})
            skipped.append(line)
    report.records = len(messages)
    return messages, report, skipped


@dataclass(slots=True)
class TailFix:
    """What a tail-first load must change on disk: drop a torn end, append synthesized results."""

    keep_bytes: int  # the file's length without its torn last record
    torn: bool
    append: list[Message] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.torn or bool(self.append)

    def apply(self, path: Path) -> None:
        if not self.changed:
            return
        fd = os.open(path, os.O_WRONLY)
        try:
            os.ftruncate(fd, self.keep_bytes)
            if self.append:
                os.lseek(fd, 0, os.SEEK_END)
                data = b"".join(encode_line(m) for m in self.append)
                if os.write(fd, data) != len(data):
                    raise OSError(f"short write while repairing {path}")
            os.fsync(fd)
        finally:
            os.close(fd)


def load_tail(path: Path, tail_bytes: int) -> tuple[list[Message], LoadReport, TailFix] | None:
    """Load the end of a large transcript, or None when only a full load can repair it (corrupt
    lines or a repair that is not a pure append at the end)."""
    size = path.stat().st_size
    with path.open("rb") as f:
        head = _head_state(f)
        f.seek(size - tail_bytes)
        data = f.read()
    start = data.index(b"\n") + 1 if b"\n" in data else len(data)  # the first line is cut: skip it
    messages, report, _skipped = parse(data[start:])
    if report.corrupt_lines:
        return None
    turn = next((i for i, m in enumerate(messages) if _starts_turn(m)), None)
    if turn is None:
        return None
    tail = messages[turn:]
    fixed, report.repair = repair(tail)
    if report.repair.changed and fixed[: len(tail)] != tail:
        return None
    report.path = str(path)
    report.not_loaded_bytes = size - tail_bytes + start
    report.records = len(head) + len(tail)
    marker = Notice(kind=NOT_LOADED, text=f"{report.not_loaded_bytes} bytes of earlier conversation are on disk")
    keep = size - report.torn_tail_bytes
    fix = TailFix(keep_bytes=keep, torn=bool(report.torn_tail_bytes), append=fixed[len(tail) :])
    if head:  # a compacted transcript: the summary and pinned items open the loaded part again
        return [*head, marker, *join_summary(PinnedState.from_history(head).render(), fixed)], report, fix
    return [marker, *fixed], report, fix


def _head_state(f: Any) -> list[Message]:
    """The compaction state and the summary that opens a compacted transcript, if there is one."""
    first = f.readline()
    try:
        record = decode(orjson.loads(first))
    except (ValueError, RecordError):
        return []
    if not (isinstance(record, Notice) and record.kind == STATE_KIND):
        return []
    return [record]


def _starts_turn(message: Message) -> bool:
    return isinstance(message, UserMessage) and not any(isinstance(b, ToolResultBlock) for b in message.content)

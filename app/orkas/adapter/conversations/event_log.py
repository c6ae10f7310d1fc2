"""A conversation's product events on disk, so a view that reconnects after the server restarted is
replayed what happened and sequence numbers go on from where they were (a view that had seen up to
250 must not wait for a new 251 while the restarted server counts from 1).

`<conversation folder>/events.jsonl`, one wire event per line, appended as they are published (flushed,
not fsynced: the transcript is the durable record; this is the view's replay). Trimmed by sequence
number when it grows past twice what is kept. A torn last line (a crash mid-write) is skipped.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import IO, Any

from orkas.core.fsutil import atomic_write

log = logging.getLogger(__name__)


class EventLog:
    def __init__(self, path: Path, keep: int) -> None:
        self.path = path
        self.keep = keep
        self._file: IO[str] | None = None
        self._lines = 0
        self._size = 0  # bytes on disk as this process last left them
        self._torn = False  # the log ends mid-line (a crash mid-write): the next event starts a line of its own

    def load(self) -> list[dict[str, Any]]:
        """The last `keep` events in order; [] when there is no log yet."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            self._size = 0
            return []
        except OSError:
            log.warning("cannot read the event log %s", self.path, exc_info=True)
            return []
        self._size = len(raw)
        self._torn = bool(raw) and not raw.endswith(b"\n")
        events = _parsed(raw)
        events.sort(key=lambda e: e["seq"])
        self._lines = len(events)
        return events[-self.keep :]

    def append(self, event: dict[str, Any]) -> None:
        if not self.path.parent.is_dir():
            return  # the conversation was deleted (its folder moved to the recycle bin)
        try:
            if self._file is None:
                self._file = self.path.open("a", encoding="utf-8")
            line = json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"
            if self._torn:
                line, self._torn = "\n" + line, False
            self._file.write(line)
            self._file.flush()
            self._size += len(line.encode("utf-8"))
            self._lines += 1
        except OSError:
            log.warning("cannot write the event log %s", self.path, exc_info=True)

    def trim(self) -> None:
        """Past twice `keep` lines, rewrite the log as its last `keep` events."""
        if self._lines <= 2 * self.keep:
            return
        self.close()
        try:
            events = self.load()
            lines = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in events)
            data = lines.encode("utf-8")
            atomic_write(self.path, data)
            self._lines = len(events)
            self._size = len(data)
        except OSError:
            log.warning("cannot trim the event log %s", self.path, exc_info=True)

    def read_new(self) -> list[dict[str, Any]] | None:
        """The events another process appended since this one last read or wrote the log, whole lines only (a line
        being written is read next time); None when the log was rewritten meanwhile (trimmed, replaced): then
        only a full `load` tells what it holds."""
        try:
            with self.path.open("rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < self._size:
                    return None
                if self._size:
                    f.seek(self._size - 1)
                    if f.read(1) != b"\n":  # not where a line of ours ended: another file now
                        return None
                raw = f.read(size - self._size)
        except FileNotFoundError:
            return None if self._size else []
        except OSError:
            log.warning("cannot read the event log %s", self.path, exc_info=True)
            return []
        whole = raw[: raw.rfind(b"\n") + 1]
        self._size += len(whole)
        events = _parsed(whole)
        self._lines += len(events)
        return events

    def written_elsewhere(self) -> bool:
        """Another process (an `orkas run` on the same conversation) wrote the log since this one last did."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        except OSError:
            return False
        return size != self._size

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None


def _parsed(raw: bytes) -> list[dict[str, Any]]:
    """The events in `raw`, in file order; a line torn by a crash mid-write (or not an event) is skipped."""
    events: list[dict[str, Any]] = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("seq"), int):
            events.append(event)
    return events

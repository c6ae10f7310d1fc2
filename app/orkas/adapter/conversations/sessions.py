"""Persistent sessions: one JSONL transcript per session, crash-safe.

Appends are one record per `write` followed by `fsync`; a failed or short write is rolled back
(the file is truncated to its last good length) and raised, so the caller always knows. Loading
never fails on a damaged file: a torn last line is dropped, a corrupt line is skipped (and kept in
`<id>.corrupt.jsonl` so nothing is lost), and orphan repair runs every time. When anything had to
be fixed, the clean history is written back through an atomic rewrite. The record format and the
tail-first reader are in transcript.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import uuid
from collections.abc import Sequence
from pathlib import Path

from orkas.adapter.conversations.transcript import TAIL_BYTES, LoadReport, encode_line, load_tail, parse
from orkas.core.errors import ConfigError
from orkas.core.fsutil import append_durably, atomic_write
from orkas.engine.messages import Message
from orkas.engine.repair import repair
from orkas.engine.session import check_append, check_history

SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")  # \Z, not $: $ also matches before a last newline


class PersistentSession:
    """A session whose every message is on disk before `append` returns."""

    def __init__(self, path: Path, messages: Sequence[Message] = (), *, name: str = "") -> None:
        """`name`: the id a run reports (`run_start`'s session_id): the conversation's, where the file is one of
        its transcripts; else the file's own name."""
        self.path = path
        self.name = name
        self._messages: list[Message] = list(messages)
        self._lock = asyncio.Lock()
        self._fd: int | None = None
        self._size = path.stat().st_size if path.exists() else 0

    @property
    def id(self) -> str:
        return self.name or self.path.stem

    def messages(self) -> Sequence[Message]:
        return self._messages

    async def append(self, message: Message) -> None:
        check_append(self._messages, message)
        data = encode_line(message)
        async with self._lock:
            await asyncio.to_thread(self._write, data)
            self._messages.append(message)

    def _write(self, data: bytes) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            written = os.write(self._fd, data)
            if written != len(data):
                raise OSError(28, f"short write ({written} of {len(data)} bytes)")
            os.fsync(self._fd)
        except OSError:
            # Roll back a partial record so the next append does not land on a torn line.
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                pass
            raise
        self._size += len(data)

    async def rewrite(self, messages: Sequence[Message]) -> None:
        """Replace the whole history (compaction, cleanup) through an atomic rewrite. The history
        it replaces is appended to `<id>.archive.jsonl` first, so nothing is ever lost."""
        check_history(messages)
        data = b"".join(encode_line(m) for m in messages)
        async with self._lock:
            self.close()
            await asyncio.to_thread(self._archive_and_replace, data)
            self._messages = list(messages)
            self._size = len(data)

    def _archive_and_replace(self, data: bytes) -> None:
        if self.path.exists():
            append_durably(self.path.with_suffix(".archive.jsonl"), self.path.read_bytes())
        atomic_write(self.path, data)

    async def save_output(self, text: str) -> str:
        folder = self.path.with_suffix(".outputs")
        target = folder / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.txt"

        def write() -> None:
            folder.mkdir(exist_ok=True)
            atomic_write(target, text.encode())

        await asyncio.to_thread(write)
        return str(target)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class SessionStore:
    """Sessions under one folder: `<root>/<id>.jsonl`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, session_id: str) -> Path:
        if not SESSION_ID.match(session_id):
            raise ConfigError(f"invalid session id {session_id!r}")
        return self.root / f"{session_id}.jsonl"

    def create(self) -> PersistentSession:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.path(uuid.uuid4().hex)
        return PersistentSession(path)

    def open(self, session_id: str) -> tuple[PersistentSession, LoadReport]:
        path = self.path(session_id)
        if not path.exists():
            raise ConfigError(f"no session {session_id!r} in {str(self.root)!r}")
        return load(path)


def load(path: Path, *, write_back: bool = True, tail_bytes: int = TAIL_BYTES) -> tuple[PersistentSession, LoadReport]:
    """Load and repair a transcript. Never raises for damaged content; raises OSError if unreadable.

    A transcript larger than `tail_bytes` is loaded tail first: the last `tail_bytes` (far more than
    any context window holds) from the start of a turn, plus the compaction state at the head of the
    file. What was not loaded stays on disk; the next compaction moves it to the archive."""
    if path.stat().st_size > tail_bytes:
        loaded = load_tail(path, tail_bytes)
        if loaded is not None:
            messages, report, fix = loaded
            if write_back:
                fix.apply(path)
                report.rewritten = fix.changed
            return PersistentSession(path, messages), report
    messages, report, skipped = parse(path.read_bytes())
    report.path = str(path)
    messages, report.repair = repair(messages)
    if report.changed and write_back:
        if skipped:
            # Nothing is lost: what could not be read is kept beside the transcript.
            append_durably(path.with_suffix(".corrupt.jsonl"), b"".join(line + b"\n" for line in skipped))
        atomic_write(path, b"".join(encode_line(m) for m in messages))
        report.rewritten = True
    return PersistentSession(path, messages), report

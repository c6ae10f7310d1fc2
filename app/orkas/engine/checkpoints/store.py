"""The checkpoint store: content-addressed objects shared by every workspace, and each workspace's manifests.

`<folder>/objects/ab/cdef…` holds each distinct content once (its sha256), so a checkpoint stores only what changed
since any earlier one. A workspace's checkpoints live in `<folder>/spaces/<key>/`: each manifest lists its entries
as the difference from its parent (a full list every `FULL_EVERY` checkpoints, so a read never walks a long
chain), zlib-compressed — storage grows by the changed bytes, not by the workspace's size at every turn. A checkpoint
identical to the last is not written again: its id is the last one's. Everything is private (0700 folders, 0600
files): a checkpoint holds copies of the person's files.

One writer per workspace at a time, across processes: `holding` takes the space's lock (flock) for a checkpoint and
for a whole rewind, so two chats sharing a folder, or a window and a terminal, never interleave — and a journal found
while holding it is a dead writer's, never a live one's.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orkas.core.fsutil import atomic_write
from orkas.engine.checkpoints.scan import DIR_FLAGS, Entry, Limits, scan

FULL_EVERY = 16


@dataclass(frozen=True, slots=True)
class Taken:
    id: str
    files: int
    new_bytes: int
    hashed: int
    unchanged: bool
    left_out: tuple[str, ...]  # too big (or past the cap): listed, not kept
    truncated: bool
    seconds: float


class CheckpointStore:
    def __init__(self, folder: Path, limits: Limits | None = None, skip: Sequence[Path] = ()) -> None:
        self.folder = folder
        self.skip = tuple(skip)
        self.limits = limits or Limits()
        self._last: dict[str, tuple[str, dict[str, Entry]]] = {}  # space → (id, entries): the next one's baseline
        self._lock = threading.RLock()
        self._held: dict[str, int] = {}  # spaces this process holds, and how deep

    # ---- objects ----
    def _object(self, digest: str) -> Path:
        return self.folder / "objects" / digest[:2] / digest[2:]

    def keep(self, digest: str, data: bytes) -> None:
        path = self._object(digest)
        if path.exists():
            return
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)  # a crash leaves a stray temp file, never a half object under its name

    def content(self, digest: str) -> bytes:
        data = self._object(digest).read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise OSError(f"checkpoint object {digest[:12]} is damaged")
        return data

    # ---- manifests ----
    def space(self, root: Path) -> Path:
        return self.folder / "spaces" / hashlib.sha256(str(root).encode()).hexdigest()[:20]

    def never(self, root: Path) -> frozenset[str]:
        """The paths under `root` no checkpoint reads and no rewind touches: the store, and `skip` (the data folder
        of the app, which a chat working in the home folder holds)."""
        inside = {p.resolve() for p in (*self.skip, self.folder)}
        return frozenset(p.relative_to(root).as_posix() for p in inside if p.is_relative_to(root) and p != root)

    @contextlib.contextmanager
    def holding(self, root: Path) -> Iterator[None]:
        """The workspace's lock, for this thread and against every other process (re-entrant within a holder)."""
        space = self.space(root)
        key = str(space)
        with self._lock:
            if self._held.get(key):
                self._held[key] += 1
                try:
                    yield
                finally:
                    self._held[key] -= 1
                return
            space.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(space / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # another process's rewind: waited for, never interleaved
                self._held[key] = 1
                try:
                    yield
                finally:
                    self._held.pop(key, None)
            finally:
                os.close(fd)  # releases the lock

    def take(self, root: Path, rules_from: Callable[[str], str] | None = None) -> Taken:
        """A checkpoint of `root` now (`rules_from`: the .gitignore texts to read it by, a checkpoint's). Raises
        OSError when the root cannot be opened."""
        started = time.perf_counter()
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        space = self.space(root)
        with self.holding(root):
            last_id, last = self._baseline(space)
            fd = os.open(root, DIR_FLAGS)
            try:
                found = scan(fd, last, self.keep, self.limits, self.never(root), rules_from)
            finally:
                os.close(fd)
            left_out = tuple(p for p, e in found.entries.items() if e[0] == "s")
            if last_id and found.entries == last:
                taken_id, unchanged = last_id, True
            else:
                taken_id, unchanged = self._write(space, root, last_id, last, found.entries, found.truncated), False
            self._last[str(space)] = (taken_id, found.entries)
        files = sum(1 for e in found.entries.values() if e[0] != "d")
        seconds = time.perf_counter() - started
        return Taken(taken_id, files, found.new_bytes, found.hashed, unchanged, left_out, found.truncated, seconds)

    def entries(self, root: Path, checkpoint: str) -> dict[str, Entry]:
        """What checkpoint `checkpoint` of `root` holds. Raises FileNotFoundError for one that is not there."""
        space = self.space(root)
        remembered = self._last.get(str(space))
        if remembered is not None and remembered[0] == checkpoint:
            return dict(remembered[1])
        return self.entries_in(space, checkpoint)

    def _baseline(self, space: Path) -> tuple[str, dict[str, Entry]]:
        remembered = self._last.get(str(space))
        if remembered is not None:
            return remembered
        try:
            last = (space / "LATEST").read_text().strip()
            return last, self.entries_in(space, last)
        except (OSError, ValueError, KeyError):
            return "", {}

    def entries_in(self, space: Path, checkpoint: str) -> dict[str, Entry]:
        chain = []
        current: str | None = checkpoint
        while current:
            record = self._read(space, current)
            chain.append(record)
            current = record.get("parent")
        entries: dict[str, Entry] = {}
        for record in reversed(chain):
            for path in record.get("del", []):
                entries.pop(path, None)
            entries.update({p: tuple(e) for p, e in record["set"].items()})
        return entries

    def _write(
        self, space: Path, root: Path, parent: str, before: dict[str, Entry], now: dict[str, Entry], truncated: bool
    ) -> str:
        depth = self._depth(space, parent) if parent else 0
        if parent and depth < FULL_EVERY:
            record: dict[str, Any] = {
                "parent": parent,
                "depth": depth + 1,
                "set": {p: e for p, e in now.items() if before.get(p) != e},
                "del": [p for p in before if p not in now],
            }
        else:
            record = {"parent": None, "depth": 0, "set": now, "del": []}
        record.update(root=str(root), at=time.time(), truncated=truncated)
        checkpoint = f"{time.time_ns():x}{secrets.token_hex(3)}"
        (space / "manifests").mkdir(mode=0o700, parents=True, exist_ok=True)
        compressed = zlib.compress(json.dumps(record, separators=(",", ":")).encode(), 1)
        atomic_write(space / "manifests" / f"{checkpoint}.z", compressed)
        atomic_write(space / "LATEST", checkpoint.encode())
        return checkpoint

    def _depth(self, space: Path, checkpoint: str) -> int:
        try:
            return int(self._read(space, checkpoint).get("depth", 0) or 0)
        except (OSError, ValueError):
            return FULL_EVERY

    def _read(self, space: Path, checkpoint: str) -> dict[str, Any]:
        if not checkpoint.isalnum():
            raise FileNotFoundError(checkpoint)
        data: dict[str, Any] = json.loads(zlib.decompress((space / "manifests" / f"{checkpoint}.z").read_bytes()))
        return data

"""File writes that survive a crash at any instant (DESIGN invariant 5), and whose files are whose.

Orkas runs with umask 077 (`keep_private`), so everything it creates for itself — data, caches,
sqlite files, indexes — is its owner's alone. What it creates *for the person* (files the agent writes
in the workspace, the commands it runs) gets the person's own umask back (`person_umask`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_person_umask = _current_umask()


def keep_private() -> None:
    """From now on what this process creates is readable by its owner only. Call once, at startup."""
    global _person_umask
    previous = os.umask(0o077)
    if previous != 0o077:
        _person_umask = previous


def person_umask() -> int:
    """The umask the person started Orkas with: for their files and their commands."""
    return _person_umask


def make_folders_for_person(folder: Path) -> None:
    """`mkdir -p` with the person's own permissions (not Orkas's private 0700)."""
    missing: list[Path] = []
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for new in reversed(missing):
        try:
            new.mkdir()
        except FileExistsError:
            continue
        os.chmod(new, 0o777 & ~_person_umask)


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in `path` durable. A no-op where directories cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, mode: int = 0o600, sync: bool = True) -> None:
    """Replace `path` with `data`: temp file in the same folder, fsync, rename, fsync the folder.
    A crash leaves either the old file or the new one, never a mix. Without `sync` (what a crash may lose: a
    list's sort time) nothing is synced: still never a mix, but the old file may come back. Raises OSError."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if sync:
                os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if sync:
        fsync_dir(path.parent)


def append_durably(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Append `data` as one write and fsync it (used for side logs, not the hot path). Without `sync`, the write
    alone: the line survives the app crashing; only the machine failing may lose the latest lines."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(f"short write to {path}: {written} of {len(data)} bytes")
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


class HeldLock:
    """An exclusive lock on a file, held by this process until `release` (or the process ends: the kernel
    drops it with the file descriptor, so a killed process never leaves it stuck)."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle: IO[bytes] | None = handle

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()  # closing the descriptor releases the lock
            self._handle = None


def try_lock(path: Path) -> HeldLock | None:
    """The lock on `path` if no other process holds it, else None; never waits. On a system without
    advisory locks (Windows) the lock is always given: one process at a time there in practice."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "ab")
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return HeldLock(handle)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return HeldLock(handle)


RENAME_EXCHANGE = 2  # renameat2's flag: two paths trade places in one step


def replace_folder(new: Path, target: Path, aside: Path) -> Path:
    """`new` takes `target`'s place: in one step where the system can exchange two paths (Linux's renameat2), else in
    two renames through `aside`, put back if the second fails. Returns where the old folder is now, for the caller to
    remove; on failure both are as they were (an OSError says why)."""
    import ctypes
    import errno

    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is not None:
        at_cwd = -100
        if renameat2(at_cwd, os.fsencode(new), at_cwd, os.fsencode(target), RENAME_EXCHANGE) == 0:
            return new  # holding the old folder now
        code = ctypes.get_errno()
        if code not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise OSError(code, os.strerror(code), str(target))
    os.rename(target, aside)
    try:
        os.rename(new, target)
    except OSError:
        os.rename(aside, target)
        raise
    return aside

"""File writes that survive a crash at any instant (DESIGN invariant 5)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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


def atomic_write(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Replace `path` with `data`: temp file in the same folder, fsync, rename, fsync the folder.
    A crash leaves either the old file or the new one, never a mix. Raises OSError."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(path.parent)


def append_durably(path: Path, data: bytes) -> None:
    """Append `data` as one write and fsync it (used for side logs, not the hot path)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(f"short write to {path}: {written} of {len(data)} bytes")
        os.fsync(fd)
    finally:
        os.close(fd)

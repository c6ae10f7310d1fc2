"""What the file tools share: path checks through the one policy, read baselines, per-file locks.

A baseline (mtime, size, sha256) is recorded whenever a run reads or writes a file; edits compare
against it under the file's lock, so a file that changed since it was read is never overwritten
silently — by another worker, another run, or the person.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orkas.core.fsutil import person_umask
from orkas.engine.sandbox import PathDenied, PathPolicy, pinned
from orkas.engine.tools.base import ToolContext, ToolResult, error_result

_LOCKS: dict[str, asyncio.Lock] = {}
PATH_PROPERTY: Mapping[str, Any] = {
    "type": "string",
    "description": "Path relative to the workspace (or absolute inside a granted folder).",
}
PATH_ONLY_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"path": PATH_PROPERTY},
    "required": ["path"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class Baseline:
    mtime_ns: int
    size: int
    sha256: str


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def lock_for(path: Path) -> asyncio.Lock:
    """One lock per file for the whole process: check-and-write is atomic across workers."""
    return _LOCKS.setdefault(str(path), asyncio.Lock())


def baselines(ctx: ToolContext) -> dict[str, Baseline]:
    found: Any = ctx.state.setdefault("baselines", {})
    assert isinstance(found, dict)
    return found


def record(ctx: ToolContext, path: Path, data: bytes, info: os.stat_result | None = None) -> Baseline:
    info = info or path.stat()
    return record_digest(ctx, path, sha256(data), info)


def record_digest(ctx: ToolContext, path: Path, digest: str, info: os.stat_result) -> Baseline:
    """Remember what a file was when this run read it (its stat from the opened file, its sha256)."""
    baseline = Baseline(info.st_mtime_ns, info.st_size, digest)
    baselines(ctx)[str(path)] = baseline
    return baseline


def read_verified(policy: PathPolicy, path: Path) -> bytes:
    """Read a path through the policy: no symlink swapped in, no other name of a protected file."""
    return policy.read_bytes(path)


def current(path: Path, policy: PathPolicy | None = None) -> tuple[Baseline, bytes]:
    data = read_verified(policy, path) if policy is not None else path.read_bytes()
    info = path.stat()
    return Baseline(info.st_mtime_ns, info.st_size, sha256(data)), data


class FileTool:
    """Base for tools bound to a workspace through a `PathPolicy`."""

    read_only = True

    def __init__(self, policy: PathPolicy | None = None) -> None:
        self._policy = policy

    def policy(self, ctx: ToolContext) -> PathPolicy:
        if self._policy is None:
            self._policy = PathPolicy(ctx.workspace)
        return self._policy

    def resolve(self, ctx: ToolContext, raw: str, *, write: bool) -> Path | ToolResult:
        try:
            return self.policy(ctx).check(raw, write=write)
        except PathDenied as e:
            return error_result(f"access denied: {e.reason} ({raw!r})")

    def existing(self, ctx: ToolContext, raw: str) -> Path | ToolResult:
        """`resolve` for reading something that must already exist."""
        path = self.resolve(ctx, raw, write=False)
        if isinstance(path, Path) and not path.exists():
            return error_result(f"no such file: {raw!r}")
        return path

    def folder(self, ctx: ToolContext, raw: str) -> Path | ToolResult:
        """`resolve` for a folder to list or search in."""
        path = self.resolve(ctx, raw, write=False)
        if isinstance(path, Path) and not path.is_dir():
            return error_result(f"{raw!r} is not a folder")
        return path

    def shown(self, ctx: ToolContext, path: Path) -> str:
        """The path as the model should write it: relative to the workspace when inside it."""
        try:
            return str(path.relative_to(self.policy(ctx).workspace))
        except ValueError:
            return str(path)


def write_atomic(policy: PathPolicy, path: Path, data: bytes) -> os.stat_result:
    """Replace (or create) a file the policy allowed, keeping its permissions: through its folder pinned
    from the workspace root, so a folder swapped for a link meanwhile cannot send the write elsewhere."""
    return pinned.write_file(policy, path, data, default_mode=0o666 & ~person_umask())

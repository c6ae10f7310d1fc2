"""read_file and list_files, confined to the run's workspace.

The full tool set, with the shared path policy, documents and writes, comes later; these two are
enough for the loop to do real work on a folder today.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orkas.engine.messages import ImageBlock, TextBlock
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_TEXT_BYTES = 256 * 1024
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_ENTRIES = 500
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".ruff_cache", ".pytest_cache"}


class OutsideWorkspace(Exception):
    pass


def confine(workspace: Path, raw: str) -> Path:
    """Resolve `raw` (relative to the workspace, or absolute) and refuse anything outside it,
    symlinks included."""
    root = workspace.resolve()
    path = Path(raw).expanduser()
    resolved = (path if path.is_absolute() else root / path).resolve()
    if resolved != root and not resolved.is_relative_to(root):
        raise OutsideWorkspace(f"{raw!r} is outside the workspace {str(root)!r}")
    return resolved


class ReadFile:
    name = "read_file"
    read_only = True
    description = (
        "Read a file in the workspace. Text comes back with line numbers (`<n>\\t<line>`); images come "
        "back as images. Large files are paged: pass `start_line` to continue where the marker says. "
        "Paths are relative to the workspace root."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace."},
            "start_line": {"type": "integer", "minimum": 1, "description": "First line (1-based)."},
            "max_lines": {"type": "integer", "minimum": 1, "maximum": MAX_LINES},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            path = confine(ctx.workspace, input["path"])
        except OutsideWorkspace as e:
            return error_result(str(e))
        if not path.exists():
            return error_result(f"no such file: {input['path']!r}")
        if path.is_dir():
            return error_result(f"{input['path']!r} is a directory; use list_files")
        start = int(input.get("start_line", 1))
        limit = int(input.get("max_lines", MAX_LINES))
        return await asyncio.to_thread(_read, path, input["path"], start, limit)


def _read(path: Path, shown: str, start: int, limit: int) -> ToolResult:
    media_type = IMAGE_TYPES.get(path.suffix.lower())
    size = path.stat().st_size
    if media_type is not None:
        if size > MAX_IMAGE_BYTES:
            return error_result(f"{shown!r} is an image of {size} bytes; the limit is {MAX_IMAGE_BYTES}")
        data = path.read_bytes()
        return ToolResult(
            content=(ImageBlock(data=base64.b64encode(data).decode(), media_type=media_type),),
            details={"path": str(path), "bytes": size, "sha256": hashlib.sha256(data).hexdigest()},
        )
    raw = path.read_bytes()
    if b"\0" in raw[:8192]:
        return error_result(f"{shown!r} looks like a binary file ({size} bytes); it cannot be shown as text")
    text = raw.decode("utf-8", errors="replace")
    lines = text.splitlines()
    out: list[str] = []
    used = 0
    last = start - 1
    for n in range(start, min(len(lines), start - 1 + limit) + 1):
        line = lines[n - 1]
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " …[line truncated]"
        used += len(line) + 8
        if used > MAX_TEXT_BYTES and out:
            break
        out.append(f"{n}\t{line}")
        last = n
    body = "\n".join(out) if out else f"(no lines from line {start}; the file has {len(lines)} lines)"
    if last < len(lines):
        body += f"\n[more available from line {last + 1} of {len(lines)}]"
    return text_result(
        body,
        details={"path": str(path), "lines": len(lines), "sha256": hashlib.sha256(raw).hexdigest()},
    )


class ListFiles:
    name = "list_files"
    read_only = True
    description = (
        "List files and folders in the workspace (folders end with '/'). Set `recursive` to walk "
        "subfolders; version-control and dependency folders are skipped."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Folder, relative to the workspace. Default: root."},
            "recursive": {"type": "boolean"},
        },
        "additionalProperties": False,
    }

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        raw = input.get("path", ".")
        try:
            path = confine(ctx.workspace, raw)
        except OutsideWorkspace as e:
            return error_result(str(e))
        if not path.is_dir():
            return error_result(f"{raw!r} is not a folder")
        return await asyncio.to_thread(_list, path, bool(input.get("recursive", False)))


def _list(root: Path, recursive: bool) -> ToolResult:
    entries: list[str] = []
    truncated = False
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        rel = Path(dirpath).relative_to(root)
        names = [f"{d}/" for d in dirnames] + sorted(filenames)
        for name in names:
            entries.append(str(rel / name) if rel != Path(".") else name)
            if len(entries) >= MAX_ENTRIES:
                truncated = True
                break
        if truncated or not recursive:
            break
    body = "\n".join(entries) if entries else "(empty folder)"
    if truncated:
        body += f"\n[listing stopped at {MAX_ENTRIES} entries; list a subfolder to see more]"
    return ToolResult(content=(TextBlock(text=body),), details={"count": len(entries), "truncated": truncated})

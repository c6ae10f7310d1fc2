"""Changing the workspace: write_file, edit_file, delete_file.

Read before write, with optimistic concurrency: a file must have been read (or written) in this run
before it is overwritten or edited, and an edit re-checks, under the file's lock, that the file is
still what was read. If it changed, the model gets a `stale` error with the current text around its
target and re-reads; nothing is ever overwritten silently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orkas.engine.consent import Ask
from orkas.engine.sandbox import PathDenied, pinned
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result
from orkas.engine.tools.workspace import (
    PATH_ONLY_SCHEMA,
    PATH_PROPERTY,
    FileTool,
    baselines,
    current,
    lock_for,
    record,
    write_atomic,
)

MAX_WRITE_CHARS = 2_000_000
CONTEXT_CHARS = 600


def _write_ask(tool: str, path: str, preview: str) -> Ask:
    return Ask(tool=tool, level="workspace_write", categories=(), preview=f"{tool} {path}\n{preview}"[:800], key=tool)


class WriteFile(FileTool):
    name = "write_file"
    read_only = False
    description = (
        "Create a file (parent folders are created) or replace a file you have read or written in this run. "
        "To change part of a file, prefer edit_file."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": PATH_PROPERTY, "content": {"type": "string", "maxLength": MAX_WRITE_CHARS}},
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = self.resolve(ctx, input["path"], write=True)
        if isinstance(path, ToolResult):
            return path
        if path.is_dir():
            return error_result(f"{input['path']!r} is a folder")
        if not await ctx.ask(_write_ask(self.name, self.shown(ctx, path), input["content"][:300])):
            return error_result("not allowed: the user did not approve writing files (or the mode is read-only)")
        async with lock_for(path):
            if path.exists():
                seen = baselines(ctx).get(str(path))
                if seen is None:
                    return error_result(
                        f"{self.shown(ctx, path)} already exists and was not read in this run; read it first "
                        "(or use edit_file) so nothing is overwritten by accident"
                    )
                now, text = await asyncio.to_thread(current, path, self.policy(ctx))
                if now.sha256 != seen.sha256:
                    return _stale(self.shown(ctx, path), text.decode("utf-8", errors="replace"), "")
            data = input["content"].encode()
            try:
                written = await asyncio.to_thread(write_atomic, self.policy(ctx), path, data)
            except PathDenied as e:
                return error_result(f"access denied: {e.reason} ({input['path']!r})")
            record(ctx, path, data, written)
        return text_result(
            f"wrote {self.shown(ctx, path)} ({len(data)} bytes)", details={"path": str(path), "bytes": len(data)}
        )


class EditFile(FileTool):
    name = "edit_file"
    read_only = False
    description = (
        "Replace exact text in a file you have read in this run: `old_string` must appear exactly once "
        "(include surrounding lines to make it unique), or set `replace_all`. If the file changed since you "
        "read it, you get a `stale` error with its current text: read it again and retry."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": PATH_PROPERTY,
            "old_string": {"type": "string", "minLength": 1},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = self.resolve(ctx, input["path"], write=True)
        if isinstance(path, ToolResult):
            return path
        shown = self.shown(ctx, path)
        if not path.is_file():
            return error_result(f"no such file: {input['path']!r}")
        seen = baselines(ctx).get(str(path))
        if seen is None:
            return error_result(f"read {shown} with read_file before editing it")
        old, new = input["old_string"], input["new_string"]
        if old == new:
            return error_result("old_string and new_string are the same; nothing to change")
        if not await ctx.ask(_write_ask(self.name, shown, f"- {old[:200]}\n+ {new[:200]}")):
            return error_result("not allowed: the user did not approve editing files (or the mode is read-only)")
        async with lock_for(path):
            now, raw = await asyncio.to_thread(current, path, self.policy(ctx))
            text = raw.decode("utf-8", errors="replace")
            if now.sha256 != seen.sha256:
                return _stale(shown, text, old)
            count = text.count(old)
            if count == 0:
                return error_result(_not_found(shown, text, old))
            if count > 1 and not input.get("replace_all"):
                return error_result(
                    f"old_string appears {count} times in {shown}; include more surrounding text to make it "
                    "unique, or set replace_all"
                )
            updated = text.replace(old, new) if input.get("replace_all") else text.replace(old, new, 1)
            data = updated.encode()
            try:
                written = await asyncio.to_thread(write_atomic, self.policy(ctx), path, data)
            except PathDenied as e:
                return error_result(f"access denied: {e.reason} ({input['path']!r})")
            record(ctx, path, data, written)
        replaced = count if input.get("replace_all") else 1
        return text_result(
            f"edited {shown}: {replaced} replacement(s)", details={"path": str(path), "replaced": replaced}
        )


def _stale(shown: str, text: str, target: str) -> ToolResult:
    at = text.find(target) if target else -1
    if at < 0:
        excerpt = text[:CONTEXT_CHARS]
    else:
        excerpt = text[max(0, at - CONTEXT_CHARS // 2) : at + len(target) + CONTEXT_CHARS // 2]
    return error_result(
        f"stale: {shown} changed since you read it (another worker or the user edited it). Read it again "
        f"before changing it. Its current text around the target:\n{excerpt}",
        details={"error": "stale"},
    )


def _not_found(shown: str, text: str, old: str) -> str:
    first = old.strip().splitlines()[0] if old.strip() else old
    hint = ""
    if first and first.strip() in text:
        at = text.find(first.strip())
        hint = f"\nThe first line was found; the text there is:\n{text[max(0, at - 200) : at + len(old) + 200]}"
    elif old.replace("\r\n", "\n") in text.replace("\r\n", "\n"):
        hint = "\n(It matches if line endings are ignored: the file uses different line endings.)"
    return f"old_string was not found in {shown}. Copy it exactly from the file, including whitespace.{hint}"


class DeleteFile(FileTool):
    name = "delete_file"
    read_only = False
    description = (
        "Delete a file (or an empty folder). Inside the workspace this follows the permission mode (in auto "
        "mode it happens at once); anywhere else the user is always asked first. Credential and system "
        "locations can never be deleted."
    )
    input_schema = PATH_ONLY_SCHEMA

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        raw = input["path"]
        policy = self.policy(ctx)
        try:
            path = policy.check(raw, write=True)
            inside = True
        except PathDenied as e:
            path, inside = Path(raw).expanduser().resolve(), False
            if "protected" in e.reason or "null byte" in e.reason or "hard links" in e.reason:
                return error_result(f"access denied: {e.reason} ({raw!r})")
        if not path.exists() and not path.is_symlink():
            return error_result(f"no such file: {raw!r}")
        if path.is_dir() and any(path.iterdir()):
            return error_result(f"{raw!r} is a folder that is not empty; delete its files first")
        if inside:
            ask = Ask(
                tool=self.name,
                level="workspace_write",
                categories=(),
                preview=f"delete {path}",
                key=f"{self.name}:inside",
            )
        else:
            ask = Ask(
                tool=self.name,
                level="dangerous",
                categories=("destructive",),
                preview=f"delete {path}",
                key=f"{self.name}:{path}",
            )
        if not await ctx.ask(ask):
            return error_result(f"not allowed: the user did not approve deleting {raw!r}")
        try:
            if inside:
                await asyncio.to_thread(pinned.remove, policy, path)
            elif path.is_dir():
                path.rmdir()
            else:
                path.unlink()
        except PathDenied as e:
            return error_result(f"access denied: {e.reason} ({raw!r})")
        except OSError as e:
            return error_result(f"could not delete {raw!r}: {e.strerror or e}")
        baselines(ctx).pop(str(path), None)
        return text_result(f"deleted {self.shown(ctx, path)}", details={"path": str(path)})

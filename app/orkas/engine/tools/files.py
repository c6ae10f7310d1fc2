"""Reading the workspace: read_file, stat_file, list_files, search_files, grep_files.

Every path goes through the workspace's `PathPolicy`. Documents (PDF, Word, Excel, PowerPoint) are
read as their extracted text. Large results are paged or capped with a marker that says how to get
the rest.
"""

from __future__ import annotations

import asyncio
import base64
import fnmatch
import os
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pathspec

from orkas.engine.messages import ImageBlock, TextBlock
from orkas.engine.sandbox import PathDenied, PathPolicy
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result
from orkas.engine.tools.documents import DocumentError, document_kind, extract_text
from orkas.engine.tools.workspace import PATH_ONLY_SCHEMA, PATH_PROPERTY, FileTool, read_verified, record, sha256

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_TEXT_CHARS = 200_000
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_ENTRIES = 500
MAX_MATCHES = 200
SCAN_FILES = 5000
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
SKIP_DIRS = {
    ".git",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".tox",
    "dist",
    "build",
    ".idea",
    ".DS_Store",
}


def _text_of(path: Path, policy: PathPolicy | None = None) -> tuple[str, bytes | None]:
    """(text, raw bytes) of a text file or a document; raw is None for documents."""
    if document_kind(path) is not None:
        return extract_text(path), None
    raw = read_verified(policy, path) if policy is not None else path.read_bytes()
    if b"\0" in raw[:8192]:
        raise DocumentError(f"{path.name} looks like a binary file ({len(raw)} bytes) and cannot be shown as text")
    return raw.decode("utf-8", errors="replace"), raw


class ReadFile(FileTool):
    name = "read_file"
    description = (
        "Read a file in the workspace. Text comes back with line numbers (`<n>\\t<line>`) and the file's sha256; "
        "PDF, Word (.docx), Excel (.xlsx) and PowerPoint (.pptx) files come back as their text; images come back "
        "as images. Large files are paged: continue from the line (or character) the marker names. Use either a "
        "line range (start_line, max_lines) or a character range (char_start, char_end)."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": PATH_PROPERTY,
            "start_line": {"type": "integer", "minimum": 1, "description": "First line, 1-based."},
            "max_lines": {"type": "integer", "minimum": 1, "maximum": MAX_LINES},
            "char_start": {"type": "integer", "minimum": 0, "description": "First character, 0-based."},
            "char_end": {"type": "integer", "minimum": 1, "description": "End character (exclusive)."},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = self.existing(ctx, input["path"])
        if isinstance(path, ToolResult):
            return path
        if path.is_dir():
            return error_result(f"{input['path']!r} is a folder; use list_files")
        if "char_start" in input and "start_line" in input:
            return error_result("give either a line range or a character range, not both")
        return await asyncio.to_thread(self._read, path, input, ctx)

    def _read(self, path: Path, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        media_type = IMAGE_TYPES.get(path.suffix.lower())
        policy = self.policy(ctx)
        if media_type is not None:
            try:
                data = read_verified(policy, path)
            except (PathDenied, OSError) as e:
                return error_result(f"access denied: {e}")
            if len(data) > MAX_IMAGE_BYTES:
                return error_result(f"{path.name} is an image of {len(data)} bytes; the limit is {MAX_IMAGE_BYTES}")
            record(ctx, path, data)
            image = ImageBlock(data=base64.b64encode(data).decode(), media_type=media_type)
            return ToolResult(content=(image,), details={"path": str(path), "bytes": len(data), "sha256": sha256(data)})
        try:
            text, raw = _text_of(path, policy)
        except DocumentError as e:
            return error_result(str(e))
        except (PathDenied, OSError) as e:
            return error_result(f"access denied: {e}")
        digest = sha256(raw if raw is not None else text.encode())
        if raw is not None:
            record(ctx, path, raw)
        details = {"path": str(path), "sha256": digest, "characters": len(text)}
        if "char_start" in input or "char_end" in input:
            return _char_range(text, int(input.get("char_start", 0)), input.get("char_end"), digest, details)
        return _line_range(
            text, int(input.get("start_line", 1)), int(input.get("max_lines", MAX_LINES)), digest, details
        )


def _line_range(text: str, start: int, limit: int, digest: str, details: dict[str, Any]) -> ToolResult:
    lines = text.splitlines()
    out: list[str] = []
    used = 0
    last = start - 1
    for n in range(start, min(len(lines), start - 1 + limit) + 1):
        line = lines[n - 1]
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " …[line truncated; read it with char_start/char_end]"
        used += len(line) + 8
        if used > MAX_TEXT_CHARS and out:
            break
        out.append(f"{n}\t{line}")
        last = n
    body = "\n".join(out) if out else f"(no lines from line {start}; the file has {len(lines)} lines)"
    if last < len(lines):
        body += f"\n[more available from line {last + 1} of {len(lines)}]"
    details["lines"] = len(lines)
    return text_result(f"{body}\n[sha256: {digest}]", details=details)


def _char_range(text: str, start: int, end: Any, digest: str, details: dict[str, Any]) -> ToolResult:
    stop = min(len(text), int(end) if end is not None else start + MAX_TEXT_CHARS, start + MAX_TEXT_CHARS)
    if start >= len(text):
        return error_result(f"char_start {start} is past the end ({len(text)} characters)")
    body = text[start:stop]
    if stop < len(text):
        body += f"\n[more available from character {stop} of {len(text)}]"
    return text_result(f"{body}\n[sha256: {digest}]", details=details)


class StatFile(FileTool):
    name = "stat_file"
    description = (
        "Facts about a file or folder: kind, size, modified time, and for text and documents the total characters."
    )
    input_schema = PATH_ONLY_SCHEMA

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = self.existing(ctx, input["path"])
        if isinstance(path, ToolResult):
            return path
        return await asyncio.to_thread(self._stat, path)

    def _stat(self, path: Path) -> ToolResult:
        info = path.stat()
        kind = (
            "folder"
            if path.is_dir()
            else document_kind(path) or ("image" if path.suffix.lower() in IMAGE_TYPES else "file")
        )
        facts: dict[str, Any] = {
            "path": str(path),
            "kind": kind,
            "size": info.st_size,
            "modified": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(info.st_mtime)),
        }
        if kind not in ("folder", "image"):
            try:
                facts["characters"] = len(_text_of(path)[0])
            except DocumentError as e:
                facts["note"] = str(e)
        return text_result("\n".join(f"{k}: {v}" for k, v in facts.items()), details=facts)


class ListFiles(FileTool):
    name = "list_files"
    description = (
        "List files and folders (folders end with '/'). Set `recursive` to walk subfolders; version-control, "
        "dependency and build folders are skipped."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": PATH_PROPERTY, "recursive": {"type": "boolean"}},
        "additionalProperties": False,
    }

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        root = self.folder(ctx, input.get("path", "."))
        if isinstance(root, ToolResult):
            return root
        return await asyncio.to_thread(_list, root, bool(input.get("recursive", False)))


def _list(root: Path, recursive: bool) -> ToolResult:
    entries: list[str] = []
    truncated = False
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        rel = Path(dirpath).relative_to(root)
        for name in [f"{d}/" for d in dirnames] + sorted(filenames):
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


def _ignore_spec(root: Path) -> pathspec.PathSpec[Any]:
    patterns: list[str] = []
    gitignore = root / ".gitignore"
    if gitignore.is_file():
        patterns = gitignore.read_text(errors="replace").splitlines()
    return pathspec.PathSpec.from_lines("gitignore", patterns)


def _walk(root: Path) -> Iterator[Path]:
    """Files under `root`, skipping dependency folders and what .gitignore ignores, capped."""
    spec = _ignore_spec(root)
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not spec.match_file(str(rel_dir / d) + "/"))
        for name in sorted(filenames):
            rel = rel_dir / name
            if spec.match_file(str(rel)):
                continue
            seen += 1
            if seen > SCAN_FILES:
                return
            yield Path(dirpath) / name


class SearchFiles(FileTool):
    name = "search_files"
    description = (
        "Find files by name: a glob such as '*.py' or 'src/**/test_*.ts' (or a plain substring of the name). "
        f".gitignore-aware; at most {MAX_MATCHES} results."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"pattern": {"type": "string", "minLength": 1}, "path": PATH_PROPERTY},
        "required": ["pattern"],
        "additionalProperties": False,
    }

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        root = self.folder(ctx, input.get("path", "."))
        if isinstance(root, ToolResult):
            return root
        return await asyncio.to_thread(_search, root, input["pattern"])


def _search(root: Path, pattern: str) -> ToolResult:
    glob = any(c in pattern for c in "*?[")
    found: list[str] = []
    for path in _walk(root):
        rel = str(path.relative_to(root))
        hit = (
            (fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(path.name, pattern))
            if glob
            else pattern.lower() in path.name.lower()
        )
        if hit:
            found.append(rel)
            if len(found) >= MAX_MATCHES:
                break
    body = "\n".join(found) if found else f"no file matches {pattern!r}"
    if len(found) >= MAX_MATCHES:
        body += f"\n[stopped at {MAX_MATCHES} results; narrow the pattern]"
    return ToolResult(content=(TextBlock(text=body),), details={"count": len(found)})


class GrepFiles(FileTool):
    name = "grep_files"
    description = (
        "Search file contents with a regular expression (Python syntax), documents included. `glob` filters "
        "file names, `context` adds lines around each match, `mode` is 'content' (default), 'files' (names "
        f"only) or 'count'. .gitignore-aware; at most {MAX_MATCHES} matches."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1},
            "path": PATH_PROPERTY,
            "glob": {"type": "string"},
            "context": {"type": "integer", "minimum": 0, "maximum": 10},
            "mode": {"enum": ["content", "files", "count"]},
            "ignore_case": {"type": "boolean"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            regex = re.compile(input["pattern"], re.IGNORECASE if input.get("ignore_case") else 0)
        except re.error as e:
            return error_result(f"invalid regular expression {input['pattern']!r}: {e}")
        root = self.resolve(ctx, input.get("path", "."), write=False)
        if isinstance(root, ToolResult):
            return root
        files = [root] if root.is_file() else list(_walk(root))
        glob = input.get("glob")
        if glob:
            files = [
                f
                for f in files
                if fnmatch.fnmatch(f.name, glob)
                or fnmatch.fnmatch(str(f.relative_to(root) if root.is_dir() else f.name), glob)
            ]
        return await asyncio.to_thread(
            _grep, root, files, regex, int(input.get("context", 0)), input.get("mode", "content")
        )


def _rel(root: Path, path: Path) -> str:
    return str(path.relative_to(root)) if root.is_dir() else path.name


def _grep(root: Path, files: list[Path], regex: re.Pattern[str], context: int, mode: str) -> ToolResult:
    out: list[str] = []
    matches = 0
    per_file: dict[str, int] = {}
    for path in files:
        try:
            text, _ = _text_of(path)
        except (DocumentError, OSError):
            continue
        rel = str(path.relative_to(root)) if root.is_dir() else path.name
        lines = text.splitlines()
        for index, line in enumerate(lines):
            if not regex.search(line):
                continue
            matches += 1
            per_file[rel] = per_file.get(rel, 0) + 1
            if mode == "content":
                for n in range(max(0, index - context), min(len(lines), index + context + 1)):
                    mark = ":" if n == index else "-"
                    out.append(f"{rel}{mark}{n + 1}{mark}{lines[n][:MAX_LINE_CHARS]}")
                if context:
                    out.append("--")
            if matches >= MAX_MATCHES:
                break
        if matches >= MAX_MATCHES:
            break
    if mode == "files":
        out = list(per_file)
    elif mode == "count":
        out = [f"{name}: {count}" for name, count in per_file.items()]
    body = "\n".join(out) if out else "no matches"
    if matches >= MAX_MATCHES:
        body += f"\n[stopped at {MAX_MATCHES} matches; narrow the pattern or the glob]"
    return ToolResult(content=(TextBlock(text=body),), details={"matches": matches, "files": len(per_file)})

"""Reading the workspace: read_file, stat_file, list_files, search_files, grep_files.

Every path goes through the workspace's `PathPolicy`. Documents (PDF, Word, Excel, PowerPoint) are
read as their extracted text. Large results are paged or capped with a marker that says how to get
the rest.
"""

from __future__ import annotations

import asyncio
import base64
import fnmatch
import io
import os
import re
import stat
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from orkas.engine.consent import Ask
from orkas.engine.messages import ImageBlock, TextBlock
from orkas.engine.sandbox import PathDenied, PathPolicy, pinned
from orkas.engine.sandbox.secret_files import SECRETS
from orkas.engine.sandbox.verdict import is_secret
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result
from orkas.engine.tools.documents import MAX_DOCUMENT_BYTES, DocumentError, document_kind, extract_text
from orkas.engine.tools.textstream import BinaryFile, Page, read_page
from orkas.engine.tools.untrusted import note, untrusted_result
from orkas.engine.tools.workspace import PATH_ONLY_SCHEMA, PATH_PROPERTY, FileTool, record_digest, sha256

if TYPE_CHECKING:  # the gitignore matcher loads when a listing or a search first needs it
    import pathspec

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


def _document(policy: PathPolicy, path: Path) -> str:
    """A document's text, read through the policy. Raises DocumentError, PathDenied or OSError."""
    data = policy.read_bytes(path, limit=MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise DocumentError(f"{path.name} is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MB")
    return extract_text(path.name, data)


def _relative(path: Path, policy: PathPolicy) -> str:
    return str(path.relative_to(policy.workspace)) if policy.workspace in path.parents else path.name


def hidden_files(policy: PathPolicy) -> frozenset[Path]:
    """The workspace's secret files and their other names (hard links made under innocent names)."""
    return frozenset(SECRETS.find(policy.roots).files)


async def secrets_asked(ctx: ToolContext, path: Path, tool: str, policy: PathPolicy) -> ToolResult | None:
    """A file named like a secret (.env, a key, credentials), or another name of one: its text would go to the
    model, and so off this computer — the person is asked, in every mode, and sees which file. None when it may
    be read."""
    shown = str(path.relative_to(ctx.workspace)) if ctx.workspace in path.parents else path.name
    if not is_secret(shown) and path not in await asyncio.to_thread(hidden_files, policy):  # secrets/db.yaml too
        return None
    ask = Ask(
        tool=tool,
        level="dangerous",
        categories=("secrets",),
        preview=f"read {shown}",
        key=f"{tool}:secret:{shown}",
    )
    if await ctx.ask(ask):
        return None
    return error_result(
        f"not read: {shown} may hold passwords or keys, and reading it needs the user's approval, which was not given",
        details={"level": "dangerous", "categories": ["secrets"]},
    )


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
        refused = await secrets_asked(ctx, path, self.name, self.policy(ctx))
        if refused is not None:
            return refused
        if "char_start" in input and "start_line" in input:
            return error_result("give either a line range or a character range, not both")
        return await asyncio.to_thread(self._read, path, input, ctx)

    def _read(self, path: Path, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        result = self._read_inside_policy(path, input, ctx)
        return _outside_marked(ctx, self.policy(ctx), path, result, "read_file")

    def _read_inside_policy(self, path: Path, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        policy = self.policy(ctx)
        try:
            if path.suffix.lower() in IMAGE_TYPES:
                return self._image(policy, path, ctx)
            if document_kind(path) is not None:
                return _from_text(_document(policy, path), input, {"path": str(path)})
            return self._text(policy, path, input, ctx)
        except DocumentError as e:
            return error_result(str(e))
        except (PathDenied, OSError) as e:
            return error_result(f"access denied: {getattr(e, 'reason', None) or e}")

    def _image(self, policy: PathPolicy, path: Path, ctx: ToolContext) -> ToolResult:
        _resolved, handle = policy.open_read(path)
        with handle:
            info = os.fstat(handle.fileno())
            if info.st_size > MAX_IMAGE_BYTES:
                return error_result(f"{path.name} is an image of {info.st_size} bytes; the limit is {MAX_IMAGE_BYTES}")
            data = handle.read(MAX_IMAGE_BYTES + 1)
        record_digest(ctx, path, sha256(data), info)
        image = ImageBlock(data=base64.b64encode(data).decode(), media_type=IMAGE_TYPES[path.suffix.lower()])
        return ToolResult(content=(image,), details={"path": str(path), "bytes": len(data), "sha256": sha256(data)})

    def _text(self, policy: PathPolicy, path: Path, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        _resolved, handle = policy.open_read(path)
        with handle:
            info = os.fstat(handle.fileno())
            try:
                page = _read(handle, input)
            except BinaryFile:
                return error_result(
                    f"{path.name} looks like a binary file ({info.st_size} bytes) and cannot be shown as text"
                )
        record_digest(ctx, path, page.sha256, info)
        return _shown(page, input, {"path": str(path)})


def _outside_marked(ctx: ToolContext, policy: PathPolicy, path: Path, result: ToolResult, tool: str) -> ToolResult:
    """A result read from outside the workspace (a granted folder, an attachment) is untrusted text."""
    if result.is_error or path == policy.workspace or policy.workspace in path.parents:
        return result
    source = f"{tool} {path}"
    if not isinstance(result.content[0], TextBlock):
        note(ctx, source)  # an image: it cannot be wrapped, but the turn has still read it
        return result
    marked = untrusted_result(ctx, result.content[0].text, source, result.details)
    return ToolResult(content=marked.content, details=marked.details, is_error=result.is_error)


def _from_text(text: str, input: Mapping[str, Any], details: dict[str, Any]) -> ToolResult:
    """A document's extracted text, paged like a text file."""
    return _shown(_read(io.BytesIO(text.encode()), input), input, details)


def _read(source: BinaryIO, input: Mapping[str, Any]) -> Page:
    """The page of `source` the tool input asks for (lines or characters). Raises BinaryFile."""
    return read_page(
        source,
        start_line=int(input.get("start_line", 1)),
        max_lines=int(input.get("max_lines", MAX_LINES)),
        char_start=input.get("char_start"),
        char_end=input.get("char_end"),
        line_cap=MAX_LINE_CHARS,
        budget=MAX_TEXT_CHARS,
    )


def _shown(page: Page, input: Mapping[str, Any], details: dict[str, Any]) -> ToolResult:
    details.update({"sha256": page.sha256, "characters": page.characters})
    if "char_start" in input or "char_end" in input:
        return _char_page(page, int(input.get("char_start", 0)), details)
    return _line_page(page, int(input.get("start_line", 1)), details)


def _line_page(page: Page, start: int, details: dict[str, Any]) -> ToolResult:
    out = []
    for number, line, cut in page.shown:
        suffix = " …[line truncated; read it with char_start/char_end]" if cut else ""
        out.append(f"{number}\t{line}{suffix}")
    last = page.shown[-1][0] if page.shown else start - 1
    body = "\n".join(out) if out else f"(no lines from line {start}; the file has {page.lines} lines)"
    if last < page.lines:
        body += f"\n[more available from line {last + 1} of {page.lines}]"
    details["lines"] = page.lines
    return text_result(f"{body}\n[sha256: {page.sha256}]", details=details)


def _char_page(page: Page, start: int, details: dict[str, Any]) -> ToolResult:
    if start >= page.characters:
        return error_result(f"char_start {start} is past the end ({page.characters} characters)")
    stop = start + len(page.text)
    body = page.text
    if stop < page.characters:
        body += f"\n[more available from character {stop} of {page.characters}]"
    return text_result(f"{body}\n[sha256: {page.sha256}]", details=details)


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
        return await asyncio.to_thread(self._stat, self.policy(ctx), path)

    def _stat(self, policy: PathPolicy, path: Path) -> ToolResult:
        try:
            info = pinned.status(policy, path)  # never a link swapped in since the check
        except PathDenied as e:
            return error_result(f"access denied: {e.reason}")
        kind = (
            "folder"
            if stat.S_ISDIR(info.st_mode)
            else document_kind(path) or ("image" if path.suffix.lower() in IMAGE_TYPES else "file")
        )
        facts: dict[str, Any] = {
            "path": str(path),
            "kind": kind,
            "size": info.st_size,
            "modified": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(info.st_mtime)),
        }
        if kind not in ("folder", "image"):
            facts.update(_character_count(policy, path, info.st_size))
        return text_result("\n".join(f"{k}: {v}" for k, v in facts.items()), details=facts)


COUNT_LIMIT = 50 * 1024 * 1024  # larger text files are not read just to count their characters


def _character_count(policy: PathPolicy, path: Path, size: int) -> dict[str, Any]:
    try:
        if document_kind(path) is not None:
            return {"characters": len(_document(policy, path))}
        if size > COUNT_LIMIT:
            return {"note": "characters not counted (a large file); read_file pages through it"}
        _resolved, handle = policy.open_read(path)
        with handle:
            return {"characters": read_page(handle, max_lines=1, budget=0).characters}
    except BinaryFile:
        return {"note": "a binary file"}
    except DocumentError as e:
        return {"note": str(e)}
    except (PathDenied, OSError) as e:
        return {"note": f"not readable: {getattr(e, 'reason', None) or e}"}


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
        try:
            return await asyncio.to_thread(_list, self.policy(ctx), root, bool(input.get("recursive", False)))
        except PathDenied as e:
            return error_result(f"access denied: {e.reason}")


def _list(policy: PathPolicy, root: Path, recursive: bool) -> ToolResult:
    entries: list[str] = []
    truncated = False
    for dirpath, dirnames, filenames in pinned.walk(policy, root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        rel = Path(dirpath).relative_to(root)
        for name in [f"{d}/" for d in dirnames] + sorted(filenames):
            entries.append(f"{rel.as_posix()}/{name}" if rel != Path(".") else name)
            if len(entries) >= MAX_ENTRIES:
                truncated = True
                break
        if truncated or not recursive:
            break
    body = "\n".join(entries) if entries else "(empty folder)"
    if truncated:
        body += f"\n[listing stopped at {MAX_ENTRIES} entries; list a subfolder to see more]"
    return ToolResult(content=(TextBlock(text=body),), details={"count": len(entries), "truncated": truncated})


def _ignore_spec(policy: PathPolicy | None, root: Path) -> pathspec.PathSpec[Any]:
    patterns: list[str] = []
    gitignore = root / ".gitignore"
    if policy is not None and gitignore.is_file():
        try:
            patterns = policy.read_bytes(gitignore, limit=1024 * 1024).decode(errors="replace").splitlines()
        except (PathDenied, OSError):
            patterns = []
    import pathspec

    return pathspec.PathSpec.from_lines("gitignore", patterns)


def _walk(root: Path, policy: PathPolicy) -> Iterator[Path]:
    """Files under `root`, skipping dependency folders and what .gitignore ignores, capped. Symlinked folders
    are not followed (not even one swapped in during the walk); symlinked files are yielded, and whoever
    opens them goes through the policy."""
    spec = _ignore_spec(policy, root)
    seen = 0
    for dirpath, dirnames, filenames in pinned.walk(policy, root):
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
        try:
            return await asyncio.to_thread(_search, root, input["pattern"], self.policy(ctx))
        except PathDenied as e:
            return error_result(f"access denied: {e.reason}")


def _search(root: Path, pattern: str, policy: PathPolicy) -> ToolResult:
    glob = any(c in pattern for c in "*?[")
    found: list[str] = []
    for path in _walk(root, policy):
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
        policy = self.policy(ctx)
        if root.is_file():
            refused = await secrets_asked(ctx, root, self.name, policy)
            if refused is not None:
                return refused
        try:
            files = [root] if root.is_file() else list(_walk(root, policy))
        except PathDenied as e:
            return error_result(f"access denied: {e.reason}")
        hidden = await asyncio.to_thread(hidden_files, policy)
        secret = [f for f in files if f != root and (is_secret(_relative(f, policy)) or f in hidden)]
        files = [f for f in files if f not in secret]
        glob = input.get("glob")
        if glob:
            files = [
                f
                for f in files
                if fnmatch.fnmatch(f.name, glob)
                or fnmatch.fnmatch(str(f.relative_to(root) if root.is_dir() else f.name), glob)
            ]
        search = _Grep(policy, root, regex, int(input.get("context", 0)), input.get("mode", "content"))
        search.skipped += [f"{f.relative_to(root)} (may hold secrets: read_file asks for it)" for f in secret]
        result = await asyncio.to_thread(search.run, files)
        return _outside_marked(ctx, policy, root, result, "grep_files")


GREP_FILE_LIMIT = 50 * 1024 * 1024  # bytes of one file searched


class _Grep:
    """One search: every file opened through the policy (a link out of the workspace is skipped, not read)."""

    def __init__(self, policy: PathPolicy, root: Path, regex: re.Pattern[str], context: int, mode: str) -> None:
        self.policy, self.root, self.regex, self.context, self.mode = policy, root, regex, context, mode
        self.out: list[str] = []
        self.matches = 0
        self.per_file: dict[str, int] = {}
        self.skipped: list[str] = []

    def run(self, files: list[Path]) -> ToolResult:
        for path in files:
            if self.matches >= MAX_MATCHES:
                break
            rel = str(path.relative_to(self.root)) if self.root.is_dir() else path.name
            try:
                lines = self._lines(path)
            except (PathDenied, OSError) as e:
                if isinstance(e, PathDenied):
                    self.skipped.append(f"{rel} ({e.reason})")
                continue
            except (DocumentError, BinaryFile):
                continue
            self._search(rel, lines)
        return self._result()

    def _lines(self, path: Path) -> list[str]:
        if document_kind(path) is not None:
            return _document(self.policy, path).splitlines()
        _resolved, handle = self.policy.open_read(path)
        with handle:
            first = handle.read(8192)
            if b"\0" in first:
                raise BinaryFile(path.name)
            data = first + handle.read(GREP_FILE_LIMIT - len(first))
        return data.decode("utf-8", errors="replace").splitlines()

    def _search(self, rel: str, lines: list[str]) -> None:
        for index, line in enumerate(lines):
            if not self.regex.search(line):
                continue
            self.matches += 1
            self.per_file[rel] = self.per_file.get(rel, 0) + 1
            if self.mode == "content":
                for n in range(max(0, index - self.context), min(len(lines), index + self.context + 1)):
                    mark = ":" if n == index else "-"
                    self.out.append(f"{rel}{mark}{n + 1}{mark}{lines[n][:MAX_LINE_CHARS]}")
                if self.context:
                    self.out.append("--")
            if self.matches >= MAX_MATCHES:
                return

    def _result(self) -> ToolResult:
        out = self.out
        if self.mode == "files":
            out = list(self.per_file)
        elif self.mode == "count":
            out = [f"{name}: {count}" for name, count in self.per_file.items()]
        body = "\n".join(out) if out else "no matches"
        if self.matches >= MAX_MATCHES:
            body += f"\n[stopped at {MAX_MATCHES} matches; narrow the pattern or the glob]"
        if self.skipped:
            body += f"\n[not searched: {', '.join(self.skipped[:5])}{' …' if len(self.skipped) > 5 else ''}]"
        details = {"matches": self.matches, "files": len(self.per_file), "skipped": len(self.skipped)}
        return ToolResult(content=(TextBlock(text=body),), details=details)

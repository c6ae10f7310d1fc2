"""Where hooks are configured, in Claude Code's shape so the same scripts and files work:

    {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…", "timeout": 30}]}],
               "PostToolUse": [{"matcher": "Edit|Write", "hooks": [...]}],
               "UserPromptSubmit": [{"hooks": [...]}], "Stop": [{"hooks": [...]}]}}

- `<data>/hooks.json`: the person's own (they wrote them; they run in every conversation, without asking);
- `.orkas/hooks.json` at a project's root: code from the repository. Read only once the person trusts the folder
  (folder trust, as for its instruction files), and each command asks before its first run, as any program does.

A matcher is a regular expression over the tool's name — Orkas's (`bash`, `edit_file`) or Claude Code's for the same
tool (`Bash`, `Edit`) — matched whole; empty or "*" matches every tool. Unknown events and keys are ignored (a file
written for Claude Code may carry more); a file that cannot be read is a problem said once, and its hooks do not run.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orkas.engine.hooks import Event

EVENTS: tuple[Event, ...] = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TIMEOUT = 60.0  # seconds, as Claude Code's
MAX_TIMEOUT = 600.0
FILE_LIMIT = 256 * 1024
SCRIPT_FILES = 500  # files of a project's .orkas/ folder read into its hooks' approval
Source = Literal["person", "workspace"]
WORKSPACE_FILE = Path(".orkas") / "hooks.json"

# Claude Code's names for Orkas's tools: a matcher and a script written for one work for the other.
CLAUDE_NAMES = {
    "bash": "Bash",
    "process_start": "Bash",  # a background command is still Bash to Claude Code (run_in_background)
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "list_files": "LS",
    "search_files": "Glob",
    "grep_files": "Grep",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
}


@dataclass(frozen=True, slots=True)
class HookCommand:
    event: Event
    matcher: re.Pattern[str] | None  # None: every tool (and the events without tools)
    command: str
    timeout: float
    source: Source
    file: Path  # where it is written, for the person
    scripts: str = ""  # a project hook: the digest of the project's files its command names (read when loaded)

    @property
    def key(self) -> str:
        """What an approval remembers: this command, from this kind of file, running these scripts of the project —
        an edited command, or an edited script it runs, asks again."""
        digest = hashlib.sha256(f"{self.source}\0{self.command}\0{self.scripts}".encode()).hexdigest()[:16]
        return f"hook:{digest}"

    def matches(self, tool: str | None) -> bool:
        if self.matcher is None or tool is None:
            return True
        names = (tool, CLAUDE_NAMES.get(tool, tool))
        return any(self.matcher.fullmatch(name) for name in names)


@dataclass(frozen=True, slots=True)
class HookFile:
    commands: tuple[HookCommand, ...] = ()
    problem: str | None = None  # the file's hooks do not run, and why
    notes: tuple[str, ...] = ()  # what in it Orkas does not run (Claude Code's other events)


def read_hooks(path: Path, source: Source) -> HookFile:
    """The hooks `path` configures (none, and no problem, when there is no such file)."""
    try:
        if not path.is_file():
            return HookFile()
        raw = path.read_bytes()[: FILE_LIMIT + 1]
        if len(raw) > FILE_LIMIT:
            return HookFile(problem=f"{path} is larger than {FILE_LIMIT // 1024} KiB: its hooks do not run")
        data = json.loads(raw)
    except (OSError, ValueError) as e:
        return HookFile(problem=f"{path} cannot be read ({type(e).__name__}: {e}): its hooks do not run")
    try:
        commands = tuple(_commands(data, path, source))
    except (TypeError, ValueError, KeyError, AttributeError, re.error) as e:
        return HookFile(problem=f"{path}: {e}: its hooks do not run")
    other = sorted(set(data.get("hooks", {})) - set(EVENTS))
    said = f"{path}: {', '.join(other)} hooks are not run by Orkas (it runs {', '.join(EVENTS)})" if other else ""
    return HookFile(commands, notes=(said,) if said else ())


def _commands(data: object, path: Path, source: Source) -> list[HookCommand]:
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise ValueError('expected {"hooks": {"PreToolUse": [...], ...}}')
    found: list[HookCommand] = []
    for event, groups in data.get("hooks", {}).items():
        if event not in EVENTS:
            continue  # Claude Code's other events (SessionStart, Notification, …): not Orkas's
        if not isinstance(groups, list):
            raise ValueError(f"{event} must be a list")
        for group in groups:
            pattern = str(group.get("matcher") or "") if event in TOOL_EVENTS else ""
            matcher = None if pattern in ("", "*") else re.compile(pattern)
            for hook in group["hooks"]:
                if hook.get("type", "command") != "command":
                    continue  # a prompt-based hook: not supported here
                command = hook["command"]
                if not isinstance(command, str) or not command.strip():
                    raise ValueError(f"a {event} hook has no command")
                timeout = hook.get("timeout", DEFAULT_TIMEOUT)
                if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not 0 < timeout <= MAX_TIMEOUT:
                    raise ValueError(f"a {event} hook's timeout must be 1 to {MAX_TIMEOUT:.0f} seconds")
                scripts = _scripts(command, path.parent.parent) if source == "workspace" else ""
                found.append(HookCommand(event, matcher, command, float(timeout), source, path, scripts))
    return found


def _scripts(command: str, root: Path) -> str:
    """A digest of the project's hook code: every file in its `.orkas/` folder, and the project's files the command
    names (`./lint.sh`). What the code reaches elsewhere in the repository is not in it — as for any program approved
    "always", whose code changes with the project."""
    digest = hashlib.sha256()
    paths: list[Path] = []
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        path = (root / word).resolve() if not word.startswith("/") else Path(word).resolve()
        if path.is_relative_to(root.resolve()) and path.is_file():
            paths.append(path)
    folder = root / ".orkas"
    if folder.is_dir() and not folder.is_symlink():
        paths += sorted(p for p in folder.rglob("*") if p.is_file())[:SCRIPT_FILES]
    for path in paths:
        try:
            digest.update(str(path).encode() + b"\0" + path.read_bytes()[: 1 << 20])
        except OSError:
            continue
    return digest.hexdigest()[:16]

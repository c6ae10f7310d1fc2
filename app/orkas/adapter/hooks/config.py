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
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orkas.engine.hooks import Event

EVENTS: tuple[Event, ...] = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TIMEOUT = 60.0  # seconds, as Claude Code's
MAX_TIMEOUT = 600.0
FILE_LIMIT = 256 * 1024
Source = Literal["person", "workspace"]
WORKSPACE_FILE = Path(".orkas") / "hooks.json"

# Claude Code's names for Orkas's tools: a matcher and a script written for one work for the other.
CLAUDE_NAMES = {
    "bash": "Bash",
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

    @property
    def key(self) -> str:
        """What an approval remembers: this command, from this kind of file (an edit is a new command)."""
        digest = hashlib.sha256(f"{self.source}\0{self.command}".encode()).hexdigest()[:16]
        return f"hook:{digest}"

    def matches(self, tool: str | None) -> bool:
        if self.matcher is None or tool is None:
            return True
        names = (tool, CLAUDE_NAMES.get(tool, tool))
        return any(self.matcher.fullmatch(name) for name in names)


@dataclass(frozen=True, slots=True)
class HookFile:
    commands: tuple[HookCommand, ...] = ()
    problem: str | None = None


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
        return HookFile(problem=f"{path} cannot be read ({type(e).__name__}): its hooks do not run")
    try:
        return HookFile(tuple(_commands(data, path, source)))
    except (TypeError, ValueError, KeyError, AttributeError, re.error) as e:
        return HookFile(problem=f"{path}: {e}: its hooks do not run")


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
                found.append(HookCommand(event, matcher, command, float(timeout), source, path))
    return found

"""Hooks as commands, the way Claude Code runs them: the event as JSON on standard input, the answer in the exit code
and the output.

Each hook is a command run through the conversation's one executor — confined like any command the person approved
(the workspace writable, a fresh home, no network), in the project's folder, with its own timeout — and receives

    {"session_id", "cwd", "hook_event_name", "transcript_path", …the event's own fields…}

(`tool_name` is Claude Code's name for the tool where it has one, `orkas_tool_name` Orkas's; a file tool's input
also carries `file_path`, absolute). It answers:
- exit 0: nothing to say, or JSON: `{"decision": "block", "reason": …}`, or for PreToolUse
  `{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": …}}`,
  `hookSpecificOutput.additionalContext` for the model, `systemMessage` for the person; a UserPromptSubmit hook's
  plain output is added to the prompt;
- exit 2: block, with its output as the reason (PreToolUse: the call is refused; PostToolUse: the model is told;
  UserPromptSubmit: the prompt is refused; Stop: the agent goes on);
- anything else, or a timeout: the hook failed — the person is told, the run goes on.
A hook never approves anything: "allow" and "ask" are no objection, and the person's approvals stand.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orkas.adapter.hooks.config import CLAUDE_NAMES, WORKSPACE_FILE, HookCommand, read_hooks
from orkas.engine.consent import Ask
from orkas.engine.hooks import ALL_EVENTS, Event, Outcome
from orkas.engine.sandbox import PathDenied

if TYPE_CHECKING:
    from orkas.engine.sandbox.executor import ExecResult, Executor

log = logging.getLogger(__name__)
BLOCK = 2  # the exit code that blocks, as Claude Code's
SAID_LIMIT = 4000  # characters of a hook's reason or context kept
FILE_TOOLS = ("read_file", "write_file", "edit_file", "delete_file", "stat_file")


@dataclass(frozen=True, slots=True)
class HookSet:
    """The hooks in force for one conversation's run: the person's, and the project's when its folder is trusted."""

    commands: tuple[HookCommand, ...]
    problems: tuple[str, ...]
    folder: Path  # where hooks run (the conversation's folder)
    session: str  # the conversation's id

    @staticmethod
    def load(data: Path, folder: Path, session: str, project_root: Path | None, trusted: bool) -> HookSet:
        """`project_root`/`trusted`: the project the folder belongs to, and whether the person trusts it."""
        mine = read_hooks(data / "hooks.json", "person")
        theirs = read_hooks(project_root / WORKSPACE_FILE, "workspace") if project_root and trusted else None
        commands = (*mine.commands, *(theirs.commands if theirs else ()))
        problems = (
            *(p for p in (mine.problem, theirs.problem if theirs else None) if p),
            *mine.notes,
            *(theirs.notes if theirs else ()),
        )
        return HookSet(commands, problems, folder, session)


class CommandHooks:
    """The engine's `Hooks` for one agent: `events` are those it fires (a member's run: the tool events only)."""

    def __init__(self, hooks: HookSet, executor: Callable[[], Executor], events: frozenset[Event] = ALL_EVENTS) -> None:
        self.hooks = hooks
        self.executor = executor  # the agent's one executor, made with its tools
        self.events = events
        self._said_problems = False

    def _for(self, event: Event, tool: str | None) -> list[HookCommand]:
        if event not in self.events:
            return []
        return [c for c in self.hooks.commands if c.event == event and c.matches(tool)]

    def wants(self, event: Event, tool: str | None = None) -> bool:
        return bool(self._for(event, tool)) or (bool(self.hooks.problems) and not self._said_problems)

    def approvals(self, event: Event, tool: str | None = None) -> list[Ask]:
        return [
            Ask(
                tool=f"{event} hook",
                level="runs_program",
                categories=("hook",),
                preview=f"{event} hook from {c.file}:\n{c.command}",
                key=c.key,
            )
            for c in self._for(event, tool)
            if c.source == "workspace"
        ]

    async def run(self, event: Event, payload: Mapping[str, Any], approved: frozenset[str]) -> Outcome:
        notes = [] if self._said_problems else list(self.hooks.problems)
        self._said_problems = True
        tool = payload.get("tool_name") if isinstance(payload.get("tool_name"), str) else None
        chosen = [c for c in self._for(event, tool) if c.source == "person" or c.key in approved]
        skipped = [c for c in self._for(event, tool) if c not in chosen]
        notes += [f"The {event} hook `{_short(c.command)}` from {c.file} did not run: not approved" for c in skipped]
        if not chosen:
            return Outcome(notes=tuple(notes))
        data = json.dumps(self._event(event, payload), ensure_ascii=False).encode()
        answers = await asyncio.gather(*(self._one(c, data) for c in chosen))
        blocks = [a.block for a in answers if a.block]
        contexts = [a.context for a in answers if a.context]
        notes += [note for a in answers for note in a.notes]
        return Outcome(
            block="\n".join(blocks)[:SAID_LIMIT] if blocks else None,
            context="\n".join(contexts)[:SAID_LIMIT],
            notes=tuple(notes),
        )

    def _event(self, event: Event, payload: Mapping[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = {
            "session_id": self.hooks.session,
            "transcript_path": "",
            "cwd": str(self.hooks.folder),
            "hook_event_name": event,
            **payload,
        }
        tool = payload.get("tool_name")
        if isinstance(tool, str):
            data["orkas_tool_name"] = tool
            data["tool_name"] = CLAUDE_NAMES.get(tool, tool)
            given = dict(payload.get("tool_input") or {})
            if tool in FILE_TOOLS and isinstance(given.get("path"), str):
                given["file_path"] = str((self.hooks.folder / given["path"]).resolve())
            data["tool_input"] = given
        return data

    async def _one(self, hook: HookCommand, data: bytes) -> Outcome:
        folder = str(self.hooks.folder)
        began = time.perf_counter()
        executor = self.executor()
        try:
            result = await executor.run(
                hook.command,
                cwd=self.hooks.folder,
                timeout=hook.timeout,
                writable=True,  # approved (the person's own file, or asked): as an approved command runs
                stdin=data,
                env={"ORKAS_PROJECT_DIR": folder, "CLAUDE_PROJECT_DIR": folder, "ORKAS_HOOK_EVENT": hook.event},
                readable=scripts_of(hook) if hook.source == "person" else (),
            )
        except PathDenied as e:
            return Outcome(notes=(f"The {hook.event} hook `{_short(hook.command)}` cannot run: {e.reason}",))
        log.info(
            "hook %s (%s, %s) exit %s in %.0f ms",
            hook.event,
            hook.source,
            hook.key,
            result.exit_code,
            (time.perf_counter() - began) * 1000,
        )
        return answer(hook, result)


def answer(hook: HookCommand, result: ExecResult) -> Outcome:
    """What a hook's exit code and output say (see the module's docstring), as text that can be written anywhere."""
    said = _clean(result.output.strip())
    name = f"The {hook.event} hook `{_short(hook.command)}`"
    if result.timed_out or result.exit_code is None:
        return Outcome(notes=(f"{name} did not finish in {hook.timeout:.0f} s and was stopped",))
    if result.exit_code == BLOCK:
        return Outcome(block=said[:SAID_LIMIT] or f"{name} refused (exit 2) without saying why")
    if result.exit_code != 0:
        first = said.splitlines()[0][:300] if said else "no output"
        return Outcome(notes=(f"{name} failed (exit {result.exit_code}): {first}",))
    if result.truncated:  # only its head and tail came back: its answer cannot be read whole
        unread = f"{name} said more than Orkas reads of a hook ({len(said)} characters kept): its answer was not read"
        if hook.event in ("PreToolUse", "UserPromptSubmit"):  # a check that could not be read does not pass
            return Outcome(block=f"{unread}, so this is refused; have the hook print less")
        return Outcome(notes=(unread,))
    parsed = _json(said)
    if parsed is None:
        context = said[:SAID_LIMIT] if hook.event == "UserPromptSubmit" else ""
        return Outcome(context=context)
    found = parsed.get("hookSpecificOutput")
    specific: dict[str, Any] = found if isinstance(found, dict) else {}
    block: str | None = None
    if str(parsed.get("decision", "")).lower() in ("block", "deny"):
        block = str(parsed.get("reason") or f"{name} said no")
    if str(specific.get("permissionDecision", "")).lower() == "deny":
        block = str(specific.get("permissionDecisionReason") or parsed.get("reason") or f"{name} said no")
    if parsed.get("continue") is False and hook.event != "Stop":
        block = block or str(parsed.get("stopReason") or f"{name} asked to stop")
    extra = specific.get("additionalContext")
    message = parsed.get("systemMessage")
    return Outcome(
        block=_clean(block[:SAID_LIMIT]) if block else None,
        context=_clean(str(extra)[:SAID_LIMIT]) if extra else "",
        notes=(_clean(f"{name}: {str(message)[:300]}"),) if message else (),
    )


def _clean(text: str) -> str:
    """What a hook said, as valid text: JSON may carry lone surrogates ("\\ud800"), which no file or wire can hold."""
    return text.encode("utf-8", "replace").decode("utf-8")


def scripts_of(hook: HookCommand) -> tuple[Path, ...]:
    """The folders of the files a person's hook command names by path (`~/hooks/check.sh`, `/opt/x/lint.py`): its
    scripts, made readable to it (a confined command sees neither the home nor other folders)."""
    try:
        words = shlex.split(hook.command)
    except ValueError:
        return ()
    folders: list[Path] = []
    for word in words:
        if word.startswith(("/", "~/")):
            path = Path(word).expanduser()
            if path.is_file() and path.parent not in folders:
                folders.append(path.parent)
    return tuple(folders)


def _json(text: str) -> dict[str, Any] | None:
    """The hook's JSON answer: its whole output, or (errors printed before it) its last line."""
    for candidate in (text, text.splitlines()[-1] if text else ""):
        if candidate.startswith("{"):
            try:
                value = json.loads(candidate)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


def _short(command: str) -> str:
    line = command.strip().splitlines()[0] if command.strip() else ""
    return line if len(line) <= 60 else line[:59] + "…"

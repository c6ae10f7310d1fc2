"""Running commands: bash, and long-lived background processes.

Every command is classified (sandbox/risk.py) and goes through consent before it runs; only what is
provably read-only runs without asking. Everything runs through the one `Executor`.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orkas.engine.consent import Ask, preview
from orkas.engine.sandbox import PathDenied
from orkas.engine.sandbox.executor import ExecResult, Executor, terminate
from orkas.engine.sandbox.risk import CommandRisk, classify_command
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 3600
MAX_PROCESSES = 8
READ_CHARS = 32_000


def command_key(command: str) -> str:
    """What a grant or an "always allow" rule names: the program, and its subcommand if it has one."""
    words = command.strip().split()
    key = words[0] if words else ""
    if len(words) > 1 and re.fullmatch(r"[a-z][a-z0-9-]*", words[1]):
        key += f" {words[1]}"
    return f"bash:{key}"


def _ask(command: str, risk: CommandRisk) -> Ask:
    return Ask(
        tool="bash", level=risk.level, categories=risk.categories, preview=preview(command), key=command_key(command)
    )


async def _approve(ctx: ToolContext, command: str) -> ToolResult | None:
    """None when the command may run; otherwise the refusal the model reads."""
    risk = classify_command(command)
    return None if await ctx.ask(_ask(command, risk)) else _refusal(command, risk)


def _cwd(executor: Executor, raw: str | None) -> Path | None:
    """The working folder asked for, relative to the workspace; the executor checks it."""
    if not raw:
        return None
    path = Path(raw)
    return path if path.is_absolute() else executor.policy.workspace / path


def _refusal(command: str, risk: CommandRisk) -> ToolResult:
    why = f" ({', '.join(risk.categories)}: {risk.reason})" if risk.categories else f" ({risk.reason})"
    return error_result(
        f"not run: this command needs the user's approval, which was not given{why}", details={"level": risk.level}
    )


class Bash:
    name = "bash"
    read_only = False
    description = (
        "Run a shell command in the workspace and get its exit code and output (long output keeps its "
        "beginning and end). Commands that change things may need the user's approval; read-only commands run "
        "at once. For servers and watchers use process_start instead."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1},
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT,
                "description": "Seconds (default 120).",
            },
            "cwd": {"type": "string", "description": "Working folder, relative to the workspace."},
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        command = input["command"]
        refused = await _approve(ctx, command)
        if refused is not None:
            return refused
        cwd = _cwd(self.executor, input.get("cwd"))
        try:
            result = await self.executor.run(command, cwd=cwd, timeout=float(input.get("timeout", DEFAULT_TIMEOUT)))
        except PathDenied as e:
            return error_result(f"access denied: {e.reason}")
        return _shown(result)


def _shown(result: ExecResult) -> ToolResult:
    status = "timed out (the process group was stopped)" if result.timed_out else f"exit code {result.exit_code}"
    details = {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "duration": round(result.duration, 3),
        "confined": result.confined,
        "spill_path": str(result.spill_path) if result.spill_path else None,
    }
    body = f"{status}\n{result.output}" if result.output else status
    return ToolResult(
        content=text_result(body).content, details=details, is_error=result.timed_out or result.exit_code != 0
    )


@dataclass
class _Process:
    id: str
    command: str
    log: Path
    process: asyncio.subprocess.Process
    started: float = field(default_factory=time.time)


class ProcessManager:
    """Background processes of a workspace: at most `MAX_PROCESSES` running at once."""

    def __init__(self, executor: Executor, log_dir: Path) -> None:
        self.executor = executor
        self.log_dir = log_dir
        self.processes: dict[str, _Process] = {}
        self._ids = itertools.count(1)

    def running(self) -> list[_Process]:
        return [p for p in self.processes.values() if p.process.returncode is None]

    async def start(self, command: str, cwd: Path | None) -> _Process:
        ident = f"p{next(self._ids)}"
        log = self.log_dir / f"{ident}-{int(time.time())}.log"
        process = await self.executor.start(command, log_path=log, cwd=cwd)
        entry = _Process(ident, command, log, process)
        self.processes[ident] = entry
        return entry

    async def stop_all(self) -> None:
        for entry in self.running():
            await terminate(entry.process)


class ProcessStart:
    name = "process_start"
    read_only = False
    description = (
        "Start a long-running command in the background (a dev server, a watcher, a long build). Returns an id "
        "and a log file; use process_read to see its output, process_status and process_stop."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"command": {"type": "string", "minLength": 1}, "cwd": {"type": "string"}},
        "required": ["command"],
        "additionalProperties": False,
    }

    def __init__(self, manager: ProcessManager) -> None:
        self.manager = manager

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        command = input["command"]
        if len(self.manager.running()) >= MAX_PROCESSES:
            return error_result(f"{MAX_PROCESSES} background processes are already running; stop one first")
        refused = await _approve(ctx, command)
        if refused is not None:
            return refused
        cwd = _cwd(self.manager.executor, input.get("cwd"))
        try:
            entry = await self.manager.start(command, cwd)
        except PathDenied as e:
            return error_result(f"access denied: {e.reason}")
        return text_result(
            f"started {entry.id} (pid {entry.process.pid}); output goes to {entry.log}",
            details={"id": entry.id, "pid": entry.process.pid, "log": str(entry.log)},
        )


class _ProcessTool:
    read_only = True
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
        "additionalProperties": False,
    }

    def __init__(self, manager: ProcessManager) -> None:
        self.manager = manager

    def lookup(self, ident: str) -> _Process | ToolResult:
        entry = self.manager.processes.get(ident)
        if entry is None:
            known = ", ".join(self.manager.processes) or "none"
            return error_result(f"no background process {ident!r}; known: {known}")
        return entry


class ProcessStatus(_ProcessTool):
    name = "process_status"
    description = "Is a background process still running, and with which exit code did it end?"

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        entry = self.lookup(input["id"])
        if isinstance(entry, ToolResult):
            return entry
        code = entry.process.returncode
        state = "running" if code is None else f"exited with code {code}"
        return text_result(
            f"{entry.id}: {state}, started {time.time() - entry.started:.0f}s ago: {entry.command}",
            details={"id": entry.id, "exit_code": code, "running": code is None},
        )


class ProcessRead(_ProcessTool):
    name = "process_read"
    description = f"The latest output of a background process (the last {READ_CHARS} characters by default)."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "chars": {"type": "integer", "minimum": 1, "maximum": 64_000}},
        "required": ["id"],
        "additionalProperties": False,
    }

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        entry = self.lookup(input["id"])
        if isinstance(entry, ToolResult):
            return entry
        chars = int(input.get("chars", READ_CHARS))
        data = entry.log.read_bytes() if entry.log.exists() else b""
        text = data[-chars * 4 :].decode("utf-8", errors="replace")[-chars:]
        more = len(data) > len(text.encode())
        prefix = f"[… earlier output in {entry.log}]\n" if more else ""
        return text_result(prefix + (text or "(no output yet)"), details={"id": entry.id, "bytes": len(data)})


class ProcessStop(_ProcessTool):
    name = "process_stop"
    read_only = False
    description = "Stop a background process (and everything it started)."

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        entry = self.lookup(input["id"])
        if isinstance(entry, ToolResult):
            return entry
        if entry.process.returncode is None:
            await terminate(entry.process)
        return text_result(
            f"{entry.id} stopped (exit code {entry.process.returncode})",
            details={"id": entry.id, "exit_code": entry.process.returncode},
        )

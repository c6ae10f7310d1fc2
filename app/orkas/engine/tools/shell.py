"""Running commands: bash, and long-lived background processes.

Every command is classified (sandbox/risk.py) and goes through consent before it runs; the mode
decides what is asked (consent.py). Everything runs through the one `Executor`, confined where the
machine allows it: no network unless the person approved network for this command, no home folder,
no host sockets. A command judged a read runs without a question — and therefore read-only: the
classifier only decides when to ask, and a wrong "read" must not be able to write, persist or send
anything. Only a command that was allowed past a question (by the person, a grant, an "always" rule,
or `auto` mode's confined changes) gets a writable workspace. Where nothing confines commands, anything
that is not a known read is asked about as "dangerous" — even in `auto`. An approved command that must
leave the sandbox (a path outside the workspace, privilege, the person's keys) runs unconfined: the
question says so.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orkas.engine.consent import Ask, Effect, preview
from orkas.engine.messages import TextBlock
from orkas.engine.sandbox import PathDenied
from orkas.engine.sandbox.executor import ExecResult, Executor
from orkas.engine.sandbox.risk import CommandRisk, classify_command
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result
from orkas.engine.tools.processes import MAX_PROCESSES, ManagedProcess, ProcessManager
from orkas.engine.tools.untrusted import untrusted_result

READ_CHARS = 32_000


@dataclass(frozen=True, slots=True)
class Approved:
    """What one command may do: write the workspace (it got past a question: nobody approves a read), use
    the network, leave the sandbox."""

    network: bool = False
    unconfined: bool = False
    writable: bool = False
    secrets: bool = False  # the person saw "secrets" on the card: the workspace's secret files are not hidden


def assess(
    executor: Executor, command: str, *, wants_network: bool = False, wants_secrets: bool = False
) -> tuple[Ask, CommandRisk]:
    """The question a command raises, given the sandbox in force and what the model asked for."""
    policy = executor.policy
    risk = classify_command(
        command, workspace=policy.workspace, roots=policy.roots, package_commands=executor.package_commands()
    )
    level = risk.level
    categories: list[str] = list(risk.categories)
    effect: Effect = ""
    if risk.unconfined:
        effect = "unconfined"
    elif risk.network or wants_network:
        effect = "network"
        level = "dangerous"
        if "network" not in categories:
            categories.insert(0, "network")
    if wants_secrets and "secrets" not in categories:
        level = "dangerous"  # asked in every mode, as a command naming a secret is
        categories.append("secrets")
    if executor.confined == "none" and level != "read_only":
        level = "dangerous"  # nothing would catch a misjudged command: ask before anything but a known read
        categories.append("unconfined")
    key = (
        f"bash:{risk.signature}"
        + (" +network" if wants_network and not risk.network else "")
        + (" +secrets" if wants_secrets else "")
        if risk.signature
        else None
    )
    ask = Ask(tool="bash", level=level, categories=tuple(categories), preview=preview(command), key=key, effect=effect)
    return ask, risk


async def _approve(
    ctx: ToolContext, executor: Executor, command: str, input: Mapping[str, Any]
) -> Approved | ToolResult:
    """What the command may do, or the refusal the model reads."""
    wants_network, wants_secrets = bool(input.get("network")), bool(input.get("secrets"))
    if not wants_secrets and not (await asyncio.to_thread(executor.hidden)).complete:
        wants_secrets = True  # too many files to find every secret in: the person decides (fails closed)
    ask, risk = assess(executor, command, wants_network=wants_network, wants_secrets=wants_secrets)
    if not await ctx.ask(ask):
        return _refusal(ask, risk)
    return Approved(
        network=ask.effect in ("network", "unconfined"),
        unconfined=ask.effect == "unconfined",
        writable=ask.level != "read_only",
        secrets="secrets" in ask.categories,
    )


def _cwd(executor: Executor, raw: str | None) -> Path | None:
    """The working folder asked for, relative to the workspace; the executor checks it."""
    if not raw:
        return None
    path = Path(raw)
    return path if path.is_absolute() else executor.policy.workspace / path


def _refusal(ask: Ask, risk: CommandRisk) -> ToolResult:
    why = f" ({', '.join(ask.categories)}: {risk.reason})" if ask.categories else f" ({risk.reason})"
    hint = ""
    if ask.effect == "network":
        hint = " Without network access it would fail here; web_fetch reads web pages."
    return error_result(
        f"not run: this command needs the user's approval, which was not given{why}.{hint}",
        details={"level": ask.level, "categories": list(ask.categories)},
    )


SECRETS_PROPERTY: Mapping[str, Any] = {
    "type": "boolean",
    "description": (
        "Ask the user to let this command read the workspace's secret files (.env, keys, credentials). Without "
        "it they look empty to the command and their values are cut from its output."
    ),
}
NETWORK_PROPERTY: Mapping[str, Any] = {
    "type": "boolean",
    "description": (
        "Ask the user to let this command use the network (downloads, installs, servers others must reach). "
        "Without it commands run with the network off."
    ),
}


class Bash:
    name = "bash"
    read_only = False
    description = (
        "Run a shell command in the workspace and get its exit code and output (long output keeps its "
        "beginning and end). Commands run in a sandbox: the workspace and granted folders, no network unless "
        "the user approves it (set `network`), no home folder; the workspace's secret files (.env, keys) look "
        "empty unless the user approves reading them (set `secrets`). Reads run at once; other commands may need "
        "the user's approval. For servers and watchers use process_start instead."
    )

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    @property
    def input_schema(self) -> Mapping[str, Any]:
        limits = self.executor.limits
        return {
            "type": "object",
            "properties": {
                "command": {"type": "string", "minLength": 1},
                "timeout": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": int(limits.max_timeout),
                    "description": f"Seconds (default {limits.default_timeout:.0f}, at most {limits.max_timeout:.0f}).",
                },
                "cwd": {"type": "string", "description": "Working folder, relative to the workspace."},
                "network": NETWORK_PROPERTY,
                "secrets": SECRETS_PROPERTY,
            },
            "required": ["command"],
            "additionalProperties": False,
        }

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        command = input["command"]
        approved = await _approve(ctx, self.executor, command, input)
        if isinstance(approved, ToolResult):
            return approved
        cwd = _cwd(self.executor, input.get("cwd"))
        try:
            result = await self.executor.run(
                command,
                cwd=cwd,
                timeout=input.get("timeout"),
                network=approved.network,
                unconfined=approved.unconfined,
                writable=approved.writable,
                secrets=approved.secrets,
            )
        except PathDenied as e:
            return error_result(f"access denied: {e.reason}")
        shown = _shown(result)
        if result.network and self.executor.confined != "none" and isinstance(shown.content[0], TextBlock):
            # what a command brought in from the network is untrusted text, like a fetched page
            marked = untrusted_result(ctx, shown.content[0].text, f"bash with network: {preview(command)[:80]}")
            return ToolResult(content=marked.content, details=shown.details, is_error=shown.is_error)
        return shown


def _shown(result: ExecResult) -> ToolResult:
    status = "timed out (the process group was stopped)" if result.timed_out else f"exit code {result.exit_code}"
    details = {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "duration": round(result.duration, 3),
        "confined": result.confined,
        "network": result.network,
        "spill_path": result.spill_path.name if result.spill_path else None,  # a name: never a data-folder path
        "writable": result.writable,
        "hidden": list(result.hidden),  # the secret files it saw as empty
    }
    body = f"{status}\n{result.output}" if result.output else status
    return ToolResult(
        content=text_result(body).content, details=details, is_error=result.timed_out or result.exit_code != 0
    )


class ProcessStart:
    name = "process_start"
    read_only = False
    description = (
        "Start a long-running command in the background (a dev server, a watcher, a long build). Returns an id "
        "and a log file; use process_read to see its output, process_status and process_stop."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1},
            "cwd": {"type": "string"},
            "network": NETWORK_PROPERTY,
            "secrets": SECRETS_PROPERTY,
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def __init__(self, manager: ProcessManager) -> None:
        self.manager = manager

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        command = input["command"]
        if len(self.manager.running()) >= MAX_PROCESSES:
            return error_result(f"{MAX_PROCESSES} background processes are already running; stop one first")
        approved = await _approve(ctx, self.manager.executor, command, input)
        if isinstance(approved, ToolResult):
            return approved
        cwd = _cwd(self.manager.executor, input.get("cwd"))
        try:
            entry = await self.manager.start(command, cwd, approved)
        except PathDenied as e:
            return error_result(f"access denied: {e.reason}")
        return text_result(
            f"started {entry.id} (pid {entry.process.pid}); read its output with process_read",
            details={"id": entry.id, "pid": entry.process.pid, "log": entry.log.name},
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

    def lookup(self, ident: str) -> ManagedProcess | ToolResult:
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
        window = data[-chars * 4 :].decode("utf-8", errors="replace")
        if not entry.process.hidden.shown:  # it was started with the secrets hidden
            fresh = await asyncio.to_thread(self.manager.executor.hidden)  # and any made since it started
            window = fresh.redact(entry.process.hidden.redact(window))
        text = window[-chars:]
        more = len(data) > len(text.encode())
        prefix = f"[… {len(data) - len(text.encode())} earlier bytes not shown]\n" if more else ""
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
            await entry.process.stop()
        return text_result(
            f"{entry.id} stopped (exit code {entry.process.returncode})",
            details={"id": entry.id, "exit_code": entry.process.returncode},
        )

"""An external agent CLI as a group member: Claude Code (`claude`), Codex (`codex`) or opencode (`opencode`).

Orkas runs the CLI through the one executor, in the conversation's workspace, and streams what it says into the
member's bubble; Stop ends its whole process tree. The CLI runs with the person's rights (they chose it as a
member, and it needs its own sign-in and network), under its own permission rules for its own tools. For each
run Orkas writes an MCP configuration — in the run's private folder, 0600 — that points the CLI at
`orkas bridge` (adapter/agents/bridge.py), so it can use the person's skills, knowledge, past chats and connectors,
each call passing Orkas's own consent. Each CLI's session (Claude Code, Codex, opencode) continues on the next
turn. A CLI that is not installed is reported in the bubble, with where it was looked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orkas.adapter.agents.bridge import CAPABILITIES, BridgeHost, Handler, Reply, bridge_command
from orkas.adapter.agents.cli_output import PARSERS, Backend, Said
from orkas.engine.abort import AbortSignal
from orkas.engine.consent import Ask, Decision, Permissions
from orkas.engine.events import Done, Error, Event, RunStart, TextDelta, ToolEnd, ToolStart, permission_request
from orkas.engine.messages import AssistantMessage, TextBlock, Usage, UserMessage
from orkas.engine.tools.base import summarize

if TYPE_CHECKING:
    from orkas.engine.sandbox.executor import Executor

log = logging.getLogger(__name__)

BACKENDS: tuple[Backend, ...] = ("claude", "codex", "opencode")
DEFAULT_CAPABILITIES = ("skills", "kb", "chats", "connectors", "handoff")


def _toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


BRIDGE_CONNECT_MS = "60000"  # how long a member's CLI waits for `orkas bridge` to start before its first call


def command_line(
    backend: Backend, cli: str, prompt: str, folder: Path, bridge_env: Mapping[str, str], resume: str | None
) -> tuple[list[str], dict[str, str]]:
    """(argv, extra environment) for one turn; the MCP configuration goes into `folder` (private, 0600)."""
    server = bridge_command()
    if backend == "claude":
        config = folder / "mcp.json"
        servers = {"mcpServers": {"orkas": {"command": server[0], "args": server[1:], "env": dict(bridge_env)}}}
        _private_write(config, json.dumps(servers))
        argv = [cli, "-p", prompt, "--output-format", "stream-json", "--verbose", "--mcp-config", str(config)]
        argv += ["--allowedTools", "mcp__orkas"]  # Orkas's bridge asks the person itself
        # Claude Code's print mode makes its first model call without waiting for MCP servers (and, told to
        # wait, waits 5 s): a bridge slow to start (a busy machine) left the member without Orkas's tools.
        wait = {"MCP_CONNECTION_NONBLOCKING": "0", "MCP_CONNECT_TIMEOUT_MS": BRIDGE_CONNECT_MS}
        return ([*argv, "--resume", resume] if resume else argv), wait
    if backend == "codex":
        overrides = []
        for key, value in (("command", server[0]), ("args", server[1:]), ("env", dict(bridge_env))):
            overrides += ["-c", f"mcp_servers.orkas.{key}={_toml(value)}"]
        overrides += ["-c", f"mcp_servers.orkas.startup_timeout_sec={int(BRIDGE_CONNECT_MS) // 1000}"]  # was 10 s
        head = [cli, "exec", "--json", "--skip-git-repo-check", *overrides]
        return ([*head, "resume", resume, prompt] if resume else [*head, prompt]), {}
    config = folder / "opencode.json"
    spec: dict[str, Any] = {
        "mcp": {"orkas": {"type": "local", "command": server, "environment": dict(bridge_env), "enabled": True}}
    }
    _private_write(config, json.dumps(spec))
    session = ["--session", resume] if resume else []
    return [cli, "run", "--format", "json", *session, prompt], {"OPENCODE_CONFIG": str(config)}


def _private_write(path: Path, text: str) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as f:
        f.write(text)


def find_cli(backend: Backend, cli: str | None, path: str) -> str | None:
    """The CLI to run: its configured path, or the backend's usual name on PATH."""
    wanted = cli or backend
    if os.sep in wanted:
        return wanted if os.access(wanted, os.X_OK) else None
    return shutil.which(wanted, path=path)


@dataclass(slots=True)
class RunTools:
    """What the bridge's handlers of one run may use: the person's consent (shown in this member's bubble),
    the run's Stop, and the hand-back to the commander."""

    agent: str
    ask: Callable[[Ask], Awaitable[Decision]]
    signal: AbortSignal
    handoff: Callable[[str, str], None]


class ExternalAgent:
    """Looks like an `Agent` to the group (`run` yields the same events, ending with Done or Error)."""

    providers: Any = None  # no model calls of Orkas's own: nothing to rate-limit

    def __init__(
        self,
        *,
        name: str,
        backend: Backend,
        cli: str | None,
        workspace: Path,
        executor: Executor,
        logs: Path,
        handlers: Callable[[RunTools], Mapping[str, Handler]],
        capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
    ) -> None:
        self.name = name
        self.backend = backend
        self.cli = cli
        self.workspace = workspace
        self.executor = executor
        self.logs = logs
        self.handlers = handlers
        self.capabilities = tuple(capabilities)

    async def run(
        self,
        prompt: str,
        *,
        session: Any,
        signal: AbortSignal | None = None,
        steer: Any = None,
        permissions: Permissions | None = None,
        budget: Any = None,
        untrusted: Sequence[str] = (),
    ) -> AsyncGenerator[Event, None]:
        signal = signal or AbortSignal()
        yield RunStart(session_id=getattr(session, "id", ""), model=f"{self.backend} (external)")
        cli = find_cli(self.backend, self.cli, self.executor.base_env.get("PATH", ""))
        if cli is None:
            where = self.cli or f"{self.backend} on PATH"
            yield Error(
                kind="internal",
                message=f"{self.name}: the {self.backend} CLI was not found ({where}); "
                "install it or set its path in the agent's settings",
            )
            return
        events: asyncio.Queue[Event | None] = asyncio.Queue()
        handed: list[str] = []
        calls = itertools.count(1)
        run_tag = uuid.uuid4().hex[:8]  # tool cards are keyed by id across the conversation: unique per run
        current: contextvars.ContextVar[str] = contextvars.ContextVar("bridge_call", default=f"bridge-{run_tag}")

        async def ask(question: Ask) -> Decision:
            if permissions is None:
                return "deny"
            decided = permissions.immediate(question)
            if decided is not None:
                return "allow_once" if decided else "deny"
            asked = permissions.question(question)
            events.put_nowait(permission_request(asked, current.get()))  # on the bridge call that asks
            return await permissions.decision(asked)

        def handoff(reason: str, summary: str) -> None:
            handed[:] = [reason, summary]

        tools = RunTools(agent=self.name, ask=ask, signal=signal, handoff=handoff)

        def shown(method: str, handler: Handler) -> Handler:
            async def call(params: Mapping[str, Any]) -> Reply:  # each bridge call shows in the bubble
                ident, began = f"bridge-{run_tag}-{next(calls)}", time.perf_counter()
                current.set(ident)
                events.put_nowait(ToolStart(id=ident, name=method, input=dict(params), summary=summarize(None, params)))
                reply = await handler(params)
                events.put_nowait(
                    ToolEnd(
                        id=ident,
                        name=method,
                        content=(TextBlock(text=reply.text[:4000]),),
                        details={"via": "orkas bridge"},
                        is_error=reply.is_error,
                        duration=time.perf_counter() - began,
                    )
                )
                return reply

            return call

        handlers = {method: shown(method, h) for method, h in self.handlers(tools).items()}
        # Offered: what this agent may use and what is there (no knowledge base yet: no kb tools listed).
        offered = [c for c in self.capabilities if any(m in handlers for m in CAPABILITIES[c])]
        bridge = BridgeHost(agent=self.name, capabilities=offered, handlers=handlers)
        await bridge.start()
        assert bridge.folder is not None
        state = _resume_file(session)
        resume = _read_resume(state, self.backend)
        argv, extra = command_line(self.backend, cli, prompt, bridge.folder, bridge.env(), resume)
        text: list[str] = []
        final: str | None = None
        failure: str | None = None
        usage = Usage()
        piped = None
        try:
            piped = await self.executor.open_pipes(
                argv, log_path=self.logs / f"{self.name}.log", cwd=self.workspace, env=extra, unconfined=True
            )
            assert piped.process.stdin is not None and piped.process.stdout is not None
            piped.process.stdin.close()  # the prompt is on the command line
            stopping: list[asyncio.Task[None]] = []
            running = piped

            def halt() -> None:  # Stop: the CLI's whole tree ends now
                stopping.append(asyncio.create_task(running.stop()))

            stop = signal.on_abort(halt)
            parse = PARSERS[self.backend]
            reading = asyncio.create_task(_lines(piped.process.stdout, events, parse))
            reading.add_done_callback(lambda _t: events.put_nowait(None))
            try:
                while (event := await events.get()) is not None:
                    if isinstance(event, _SaidEvent):
                        said = event.said
                        if said.kind == "text" and said.text:
                            chunk = said.text if not text else "\n\n" + said.text
                            text.append(chunk)
                            yield TextDelta(text=chunk)
                        elif said.kind == "session":
                            resume = said.text
                        elif said.kind == "final":
                            final = said.text
                        elif said.kind == "error":
                            failure = said.text
                        elif said.kind == "usage" and said.usage is not None:
                            usage = said.usage
                    else:
                        yield event
                while not events.empty():  # what the bridge said as the output ended
                    late = events.get_nowait()
                    if late is not None and not isinstance(late, _SaidEvent):
                        yield late
            finally:
                stop()
            code = await piped.process.wait()
        finally:
            if piped is not None:
                await piped.stop()
            await bridge.close()
        said = "".join(text).strip()
        answer = said or (final or "").strip()
        if signal.aborted:
            yield Error(kind="aborted", message="stopped by the user", partial_text=said)
            return
        if resume:
            await asyncio.to_thread(_write_resume, state, self.backend, resume)
        if failure is not None or (code != 0 and not answer):
            why = failure or f"the {self.backend} CLI exited with status {code}; its log: {self.logs / self.name}.log"
            yield Error(kind="provider", message=f"{self.name}: {why}", partial_text=said)
            return
        if handed:  # the hand-back marker the group reads, at the very end
            answer = f'{answer}\n\n<handback reason="{handed[0]}" />'
        with contextlib.suppress(Exception):  # the member's own history, for the person to read back
            await session.append(UserMessage(content=(TextBlock(text=prompt),)))
            await session.append(
                AssistantMessage(
                    content=(TextBlock(text=answer),), provider=self.backend, model="external", usage=usage
                )
            )
        yield Done(text=answer, stop_reason="end_turn", usage=usage, tool_loops=0)


@dataclass(frozen=True, slots=True)
class _SaidEvent:
    said: Said


async def _lines(stream: asyncio.StreamReader, events: asyncio.Queue[Any], parse: Callable[[str], list[Said]]) -> None:
    buffer = bytearray()
    while chunk := await stream.read(65536):
        buffer += chunk
        while (end := buffer.find(b"\n")) >= 0:
            line = buffer[:end].decode("utf-8", "replace").rstrip("\r")
            del buffer[: end + 1]
            if line.strip():
                for said in parse(line):
                    events.put_nowait(_SaidEvent(said))
    if buffer.strip():
        for said in parse(buffer.decode("utf-8", "replace")):
            events.put_nowait(_SaidEvent(said))


def _session_like(value: str) -> bool:
    """A CLI's session id (a uuid, opencode's `ses_…`): never an option or a path on its command line."""
    return 0 < len(value) <= 128 and value.replace("-", "").replace("_", "").isalnum() and not value.startswith("-")


def _resume_file(session: Any) -> Path | None:
    path = getattr(session, "path", None)
    return Path(path).with_suffix(".external.json") if path is not None else None


def _read_resume(path: Path | None, backend: str) -> str | None:
    if path is None:
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    value = data.get(backend) if isinstance(data, dict) else None
    return value if isinstance(value, str) and _session_like(value) else None


def _write_resume(path: Path | None, backend: str, session_id: str) -> None:
    if path is None or not _session_like(session_id):
        return
    from orkas.core.fsutil import atomic_write

    atomic_write(path, json.dumps({backend: session_id}).encode())

"""The reverse bridge, app side: what an external agent CLI (Claude Code, Codex, opencode) running as a group
member may use of Orkas, through `orkas bridge` (cli/bridge.py), the stdio MCP server that CLI spawns.

`orkas bridge` reaches the running app over a unix-domain socket — never TCP — in a private folder of its own
(0700), with a random token for this run in a 0600 file beside it. Every request is one JSON line
`{"id", "token", "method", "params"}`; the answer is `{"id", "text", "is_error"}`. The first request with a
wrong token gets an error and the connection is closed; closing the run removes the socket, the token file and
the folder, so the token dies with the run. Each run has a capability allow-list: a method outside it is
refused with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import secrets
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orkas.core.resources import orkas_command

log = logging.getLogger(__name__)

CAPABILITIES: dict[str, tuple[str, ...]] = {
    "skills": ("orkas_list_skills", "orkas_read_skill", "orkas_run_skill"),
    "kb": ("kb_search", "kb_read", "kb_list"),
    "chats": ("chat_search", "chat_read"),
    "connectors": ("orkas_list_connector_tools", "orkas_call_connector_tool"),
    "handoff": ("orkas_handoff_to_commander",),
}
METHODS = {method: capability for capability, methods in CAPABILITIES.items() for method in methods}
MAX_LINE = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Reply:
    text: str
    is_error: bool = False


Handler = Callable[[Mapping[str, Any]], Awaitable[Reply]]


def bridge_command() -> list[str]:
    """How to start `orkas bridge` from here: the installed app's own binary, or this Python with the CLI."""
    return orkas_command("bridge")


class BridgeHost:
    """One run's bridge: its socket, its token, its allow-list, its handlers."""

    def __init__(self, *, agent: str, capabilities: Iterable[str], handlers: Mapping[str, Handler]) -> None:
        unknown = set(capabilities) - set(CAPABILITIES)
        if unknown:
            raise ValueError(f"unknown bridge capabilities: {', '.join(sorted(unknown))}")
        self.agent = agent
        self.capabilities = frozenset(capabilities)
        self.handlers = dict(handlers)
        self.token = secrets.token_hex(24)
        self.folder: Path | None = None
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.StreamWriter] = set()
        self.refused = 0  # bad tokens and methods outside the allow-list, for the tests and the log

    @property
    def socket_path(self) -> Path:
        assert self.folder is not None
        return self.folder / "s"

    @property
    def token_file(self) -> Path:
        assert self.folder is not None
        return self.folder / "token"

    async def start(self) -> None:
        # A short private folder under the system's temp: a unix socket's path must stay under ~100 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix="orkas-bridge-"))
        os.chmod(self.folder, 0o700)
        descriptor = os.open(self.token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as f:
            f.write(self.token)
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.socket_path), limit=MAX_LINE)
        os.chmod(self.socket_path, 0o600)

    def env(self) -> dict[str, str]:
        """What `orkas bridge` needs, passed in the CLI's MCP configuration (the token stays in its file)."""
        return {
            "ORKAS_BRIDGE_SOCKET": str(self.socket_path),
            "ORKAS_BRIDGE_TOKEN_FILE": str(self.token_file),
            "ORKAS_BRIDGE_CAPABILITIES": ",".join(sorted(self.capabilities)),
            "ORKAS_BRIDGE_AGENT": self.agent,
        }

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._connections):
                writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None
        if self.folder is not None:
            await asyncio.to_thread(shutil.rmtree, self.folder, True)
            self.folder = None
        self.token = ""  # dies with the run

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        lock = asyncio.Lock()
        tasks: set[asyncio.Task[None]] = set()

        async def send(message: dict[str, Any]) -> None:
            async with lock:
                writer.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
                await writer.drain()

        try:
            while line := await reader.readline():
                try:
                    request = json.loads(line)
                    if not isinstance(request, dict):
                        raise ValueError("not an object")
                except ValueError:
                    await send({"id": None, "text": "not a JSON request", "is_error": True})
                    break
                if not self.token or not hmac.compare_digest(str(request.get("token", "")), self.token):
                    self.refused += 1
                    log.warning("bridge for %s: a bad token; connection closed", self.agent)
                    await send({"id": request.get("id"), "text": "bad token: connection closed", "is_error": True})
                    break
                task = asyncio.create_task(self._answer(request, send))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except (ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            for task in tasks:
                task.cancel()
            self._connections.discard(writer)
            writer.close()

    async def _answer(self, request: dict[str, Any], send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        ident, method = request.get("id"), str(request.get("method", ""))
        raw = request.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        capability = METHODS.get(method)
        if capability is None:
            reply = Reply(f"unknown method {method!r}", True)
        elif capability not in self.capabilities:
            self.refused += 1
            reply = Reply(f"{method} is not allowed in this run (capability {capability!r} is off)", True)
        elif method not in self.handlers:
            reply = Reply(f"{method} is not available here yet (nothing of that kind is set up in Orkas)", True)
        else:
            try:
                reply = await self.handlers[method](params)
            except Exception as e:  # a handler's bug: an error the CLI reads, never a dead bridge
                log.exception("bridge method %s failed", method)
                reply = Reply(f"{method} failed: {type(e).__name__}", True)
        with contextlib.suppress(ConnectionError):
            await send({"id": ident, "text": reply.text, "is_error": reply.is_error})


class BridgeGrants:
    """ "Always" answers to an external agent's connector calls, per (agent, connector), in a machine-local file
    (`<data>/bridge-permissions.json`). Denials are never written."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> set[tuple[str, str]]:
        try:
            raw = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return set()
        return {(str(a), str(c)) for a, c in raw.get("always", []) if isinstance(a, str) and isinstance(c, str)}

    def allowed(self, agent: str, connector: str) -> bool:
        return (agent, connector) in self._load()

    def remember(self, agent: str, connector: str) -> None:
        from orkas.core.fsutil import atomic_write

        grants = self._load() | {(agent, connector)}
        data = {"version": 1, "always": sorted([list(g) for g in grants])}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, (json.dumps(data, indent=1) + "\n").encode())

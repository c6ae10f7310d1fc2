"""Sessions with the person's MCP servers, opened on first use and kept open; what `mcp_list_tools` and
`mcp_call` (engine/tools/connectors.py) talk to.

A local server starts through the one executor (`Executor.open_pipes`: scrubbed environment plus the values the
person gave, its own process group, its stderr in `<data>/logs/connectors/<id>.log`), confined by default (its
network on, its own folder and the ones the person named, a private home); one added before confinement existed,
or that the person chose to run unconfined, runs with their rights: they confirmed that exact command. A remote
one is reached over streamable HTTP with its headers from the vault (or its OAuth sign-in). Each session is held
by a task of its own (the SDK's contexts must be left by the task that entered them); a call from any task uses
it. Health is measured: a request that fails on the connection, a timeout, or the server's process exiting marks
it degraded at once and it backs off (health.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from orkas.adapter.connectors import signin
from orkas.adapter.connectors.config import Connector, Connectors, slug
from orkas.adapter.connectors.health import Health, HealthFile
from orkas.adapter.connectors.link import Link
from orkas.adapter.connectors.offers import OfferedPrompt, OfferedResource
from orkas.adapter.connectors.stdio import opened, piped_transport
from orkas.core.errors import ConfigError
from orkas.engine.abort import AbortSignal
from orkas.engine.tools.connectors import CallOutcome, ConnectorError, RemoteTool, ServerTools, unknown

if TYPE_CHECKING:
    from orkas.engine.sandbox.executor import Executor

log = logging.getLogger(__name__)
T = TypeVar("T")


class ConnectorHub:
    """Every enabled connector's link, re-read from connectors.json on each use (one small file), so a server
    added, removed or disabled in another process is seen at the next call."""

    def __init__(
        self,
        connectors: Connectors,
        health: HealthFile,
        *,
        executor_for: Callable[[Connector], Executor],
        logs: Path,
        version: str = "0",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.connectors = connectors
        self.health = health
        self.executor_for = executor_for
        self.logs = logs
        self.version = version
        self.clock = clock
        self._links: dict[str, Link] = {}
        self._closing: set[asyncio.Future[None]] = set()
        self._stamp: tuple[int, int, int] | None = None
        self._known: dict[str, Connector] = {}
        self._log_from: dict[str, int] = {}  # where each local server's latest start begins in its log

    def stderr_tail(self, connector: Connector) -> str:
        """The last line a local server wrote on stderr since it was last started (why it would not start)."""
        if connector.url or connector.id not in self._log_from:
            return ""
        try:
            with open(self.logs / f"{connector.id}.log", "rb") as f:
                f.seek(self._log_from[connector.id])
                written = f.read()[-4096:].decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [line.strip() for line in written.splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""

    def any_enabled(self) -> bool:
        try:
            return any(c.enabled for c in self.connectors.load().values())
        except ConfigError:
            return False

    # --- what the tools use (engine.tools.connectors.ConnectorAccess) ---

    async def servers(self, server: str | None) -> list[ServerTools]:
        links = [await self._link(server)] if server is not None else await self._enabled()
        found = await asyncio.gather(*(self._listing(link) for link in links))
        return list(found)

    async def tool(self, server: str, name: str) -> RemoteTool:
        link = await self._link(server)
        session = await link.open()
        tool = session.tools.get(name)
        if tool is None:
            raise unknown(f"tool of {link.connector.name}", name, list(session.tools))
        return tool

    async def call(self, tool: RemoteTool, arguments: Mapping[str, Any], signal: AbortSignal) -> CallOutcome:
        link = await self._link(tool.server_id)
        return await link.call(tool, arguments, signal)

    # --- what the composer's "/" menu and the attach menu use (offers.py) ---

    async def prompts(self) -> list[OfferedPrompt]:
        """Every enabled server's prompts; a server that cannot be reached offers none (its status says why)."""
        return [p for found in await self._each(lambda link: link.prompts()) for p in found]

    async def resources(self) -> list[OfferedResource]:
        return [r for found in await self._each(lambda link: link.resources()) for r in found]

    async def prompt(self, server: str, name: str, arguments: Mapping[str, str]) -> str:
        return await (await self._link(server)).prompt(name, arguments)

    async def read_resource(self, server: str, uri: str) -> tuple[str, bytes, str | None]:
        """(a file name for it, its bytes, its type): what the person attaches."""
        link = await self._link(server)
        listed = {r.uri: r for r in await link.resources()}
        if uri not in listed:
            raise unknown(f"resource of {link.connector.name}", uri, list(listed))
        data, mime = await link.read(uri)
        return listed[uri].name, data, mime or listed[uri].mime_type

    async def _each(self, ask: Callable[[Link], Awaitable[T]]) -> list[T]:
        async def one(link: Link) -> T | None:
            try:
                return await ask(link)
            except ConnectorError as e:
                log.info("connector %s offers nothing now: %s", link.connector.id, e)
                return None

        found = await asyncio.gather(*(one(link) for link in await self._enabled()))
        return [f for f in found if f is not None]

    # --- what the CLI, the API and the settings screen use ---

    async def status(self) -> list[dict[str, Any]]:
        current = await asyncio.to_thread(self.connectors.load)
        health = await asyncio.to_thread(self.health.load)
        rows = []
        for connector in current.values():
            h = health.get(connector.id) or Health()
            link = self._links.get(connector.id)
            status = link.status if link is not None and link.alive else h.status
            if not connector.enabled:
                status = "disconnected"
            rows.append(
                {
                    **connector.public(),
                    "signed_in": connector.oauth and await asyncio.to_thread(self._signed_in, connector),
                    "status": status,
                    "tools": h.tools,
                    "last_error": h.last_error,
                    "retry_in": round(h.waiting(self.clock())),
                }
            )
        return rows

    def _signed_in(self, connector: Connector) -> bool:
        return signin.signed_in(connector, self.connectors.vault)

    async def forget_session(self, name: str) -> None:
        """Close a connector's session (after a sign-in or a sign-out): the next use opens one with what is saved
        now, and its health starts again."""
        connector = await asyncio.to_thread(self.connectors.get, name)
        link = self._links.pop(connector.id, None)
        if link is not None:
            await link.close()
        await asyncio.to_thread(self.health.reset, connector.id)

    async def probe(self, name: str) -> ServerTools:
        """Reach it now, whatever the back-off says: the person asked. A session already open is opened again: a
        check that reused it said "connected" of a server that had since revoked the sign-in."""
        link = await self._link(name)
        if link.alive:
            await link.close()
        await asyncio.to_thread(self.health.reset, link.connector.id)
        return await self._listing(link)

    async def close(self) -> None:
        links, self._links = list(self._links.values()), {}
        for link in links:
            await link.close()
            await asyncio.to_thread(self.health.released, link.connector.id)

    # --- inside ---

    async def health_of(self, ident: str) -> Health:
        return await asyncio.to_thread(self.health.get, ident)

    async def record(
        self, ident: str, what: str, *, tools: int | None = None, error: str = "", reached: bool = False
    ) -> None:
        if what == "connecting":
            await asyncio.to_thread(self.health.connecting, ident)
        elif what == "connected":
            await asyncio.to_thread(self.health.succeeded, ident, tools)
        elif what == "signin":
            await asyncio.to_thread(self.health.needs_signin, ident, error)
        else:
            await asyncio.to_thread(self.health.failed, ident, error, reached=reached)

    async def _current(self) -> dict[str, Connector]:
        """connectors.json, parsed again only when it changed (a stat per call instead of a read and a parse)."""
        try:
            info = os.stat(self.connectors.path)
            stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        except OSError:
            stamp = None
        if stamp is None or stamp != self._stamp:
            self._known = await asyncio.to_thread(self.connectors.load)
            self._stamp = stamp
        return dict(self._known)

    async def _enabled(self) -> list[Link]:
        current = await self._current()
        await self._drop_gone(current)
        return [self._for(c) for c in current.values() if c.enabled]

    async def _link(self, name: str) -> Link:
        current = await self._current()
        await self._drop_gone(current)
        by_name = {c.name.lower(): c for c in current.values()}
        connector = current.get(name) or by_name.get(name.strip().lower())
        if connector is None:
            with contextlib.suppress(Exception):
                connector = current.get(slug(name))
        if connector is None or not connector.enabled:
            raise unknown("server", name, [c.name for c in current.values() if c.enabled])
        return self._for(connector)

    def _for(self, connector: Connector) -> Link:
        link = self._links.get(connector.id)
        if link is None or link.connector != connector:  # changed: a fresh session with the new settings
            if link is not None:  # closed in the background; held here until it is
                closing = asyncio.ensure_future(link.close())
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
            link = self._links[connector.id] = Link(connector, self)
        return link

    async def _drop_gone(self, current: Mapping[str, Connector]) -> None:
        for ident in [i for i, link in self._links.items() if i not in current or not current[i].enabled]:
            link = self._links.pop(ident)
            await link.close()
            await asyncio.to_thread(self.health.released, ident)

    async def _listing(self, link: Link) -> ServerTools:
        try:
            session = await link.open()
        except ConnectorError as e:
            return ServerTools(server=link.connector.name, status=link.status, error=str(e))
        tools = tuple(session.tools.values())
        return ServerTools(server=link.connector.name, status="connected", tools=tools)

    async def transport(self, connector: Connector, stack: AsyncExitStack, died: Callable[[], None]) -> Any:
        headers, env = await asyncio.to_thread(self.connectors.secrets, connector)
        if connector.url:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            auth = None
            if connector.oauth:  # its saved sign-in, refreshed as needed; none saved: "sign in" without a request
                vault = self.connectors.vault
                if vault is None or not await asyncio.to_thread(signin.signed_in, connector, vault):
                    raise signin.needs_sign_in(connector, again=False)
                auth = signin.provider_for(connector, vault)
            http = await stack.enter_async_context(create_mcp_http_client(headers=headers, auth=auth))
            return streamable_http_client(connector.url, http_client=http)
        executor = self.executor_for(connector)
        log_path = self.logs / f"{connector.id}.log"
        self._log_from[connector.id] = log_path.stat().st_size if log_path.exists() else 0
        piped = await executor.open_pipes(
            connector.command,
            log_path=log_path,
            cwd=Path(connector.cwd) if connector.cwd else None,
            env=env,
            # Confined: its network, its folder and the ones the person named, a private home. An entry from
            # before confinement (or one the person chose to run so) runs unconfined: they confirmed that command.
            unconfined=not connector.confined,
            network=True,
            writable=True,
        )
        stack.push_async_callback(piped.stop)  # whatever fails next, the process does not outlive the session
        streams = await stack.enter_async_context(piped_transport(piped, died))
        return opened(streams)

"""`/api/connectors`: the person's MCP servers — list with measured status, add (a local command only with
`confirmed: true`, sent by the form that showed it), remove, on/off, check now (reach it, whatever the back-off
said), and reading a Claude-Desktop `{"mcpServers": …}` file into forms to confirm one by one. Header and env
values go in and never come out: the list gives their names.

A server that signs in with OAuth: `POST …/login` starts the sign-in and answers with the provider's page (the
window opens it in the system browser); `GET …/login` says how it went; `POST …/logout` revokes and forgets."""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from orkas.adapter.connectors.config import Connector, claude_desktop_entries
from orkas.adapter.connectors.hub import ConnectorHub
from orkas.adapter.connectors.signin import SIGNED_OUT, SignedIn, sign_in, sign_out
from orkas.core.errors import ConfigError, NotFound, ToolInputError
from orkas.server.routing import Api, HTTPException


class NewConnector(BaseModel):
    name: str = Field(min_length=1, max_length=40)
    url: str | None = Field(default=None, max_length=2000)
    headers: dict[str, str] = Field(default_factory=dict)
    command: str | list[str] | None = None
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = Field(default=None, max_length=4000)
    confirmed: bool = False  # the person saw the exact command in the form and said yes
    oauth: bool = False  # (remote) it signs in with its own page: the window starts the sign-in next
    folders: list[str] = Field(default_factory=list, max_length=64)  # (local) the person's folders it may use
    unconfined: bool = False  # (local) ticked on the confirmation: it runs with the person's permissions
    check_only: bool = False  # only say what is wrong (before the confirmation is shown): nothing is added


class Switch(BaseModel):
    enabled: bool


class ImportText(BaseModel):
    text: str = Field(max_length=1_000_000)


@dataclass(slots=True)
class _Attempt:
    task: asyncio.Task[SignedIn]
    page: asyncio.Future[str]


def add_connector_routes(api: Api, hub: ConnectorHub) -> None:
    connectors = hub.connectors
    attempts: dict[str, _Attempt] = {}  # the sign-in going on, or the last one's outcome, per connector

    def connector_of(ident: str) -> Connector:
        try:
            return connectors.get(ident)
        except (NotFound, ConfigError) as e:
            raise HTTPException(status_code=404, detail=str(e)) from None

    async def signing_in(connector: Connector, page: asyncio.Future[str]) -> SignedIn:
        assert connectors.vault is not None

        def show(url: str) -> None:
            if not page.done():
                page.set_result(url)

        done = await sign_in(connector, connectors.vault, show, version=hub.version)
        await asyncio.to_thread(hub.health.succeeded, connector.id, done.tools)
        await hub.forget_session(connector.id)  # the next use connects with the new sign-in
        return done

    @api.post("/api/connectors/{ident}/login")
    async def login(ident: str) -> dict[str, Any]:
        """Start signing in; answers with the provider's page to open once the server has said where it is."""
        connector = connector_of(ident)
        if connector.url is None:
            raise HTTPException(status_code=400, detail=f"{connector.name} is a local server: nothing to sign in to")
        if connectors.vault is None:
            raise HTTPException(status_code=400, detail="a sign-in is kept in the vault, which cannot be opened here")
        if not connector.oauth:  # a remote server that turned out to want a sign-in
            connector = await asyncio.to_thread(connectors.set_oauth, connector.id, True)
        if (previous := attempts.pop(connector.id, None)) is not None:
            previous.task.cancel()  # asked again: the newer page is the one the person will use
        page: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        attempt = attempts[connector.id] = _Attempt(asyncio.create_task(signing_in(connector, page)), page)
        waiting: set[asyncio.Future[Any]] = {attempt.task, page}
        await asyncio.wait(waiting, timeout=60.0, return_when=asyncio.FIRST_COMPLETED)
        if page.done():
            return {"url": page.result()}
        if attempt.task.done() and attempt.task.exception() is not None:
            raise HTTPException(status_code=400, detail=str(attempt.task.exception()))
        raise HTTPException(status_code=504, detail=f"{connector.name} did not say where to sign in within 60 s")

    @api.get("/api/connectors/{ident}/login")
    async def login_state(ident: str) -> dict[str, Any]:
        attempt = attempts.get(connector_of(ident).id)
        if attempt is None:
            return {"state": "none"}
        if not attempt.task.done():
            return {"state": "waiting", "url": attempt.page.result() if attempt.page.done() else None}
        if attempt.task.cancelled():
            return {"state": "failed", "error": "the sign-in was started again"}
        if (error := attempt.task.exception()) is not None:
            return {"state": "failed", "error": str(error)}
        return {"state": "signed_in", "tools": attempt.task.result().tools}

    @api.post("/api/connectors/{ident}/logout")
    async def logout(ident: str) -> dict[str, Any]:
        connector = connector_of(ident)
        if connectors.vault is None:
            raise HTTPException(status_code=400, detail="the vault cannot be opened here")
        said = await sign_out(connector, connectors.vault)
        await hub.forget_session(connector.id)
        await asyncio.to_thread(hub.health.needs_signin, connector.id, SIGNED_OUT.format(name=connector.name))
        return {"said": said}

    @api.get("/api/connectors")
    async def list_connectors() -> dict[str, Any]:
        return {"connectors": await hub.status()}

    @api.post("/api/connectors")
    async def add_connector(body: NewConnector) -> dict[str, Any]:
        given = body.model_dump(include={"url", "command", "headers", "env", "cwd", "oauth", "unconfined", "folders"})
        if body.check_only:  # the form asks first, so a wrong folder or name is said before "Run … here?"
            try:
                await asyncio.to_thread(connectors.prepare, body.name, **given)
            except ConfigError as e:
                raise HTTPException(status_code=400, detail=str(e)) from None
            return {"ok": True}
        if body.command is not None and body.url is None and not body.confirmed:
            argv = shlex.split(body.command) if isinstance(body.command, str) else body.command
            raise HTTPException(
                status_code=400, detail=f"a local server runs `{shlex.join(argv)}` on this computer: confirm it first"
            )
        try:
            added = await asyncio.to_thread(connectors.add, body.name, **given)
        except ConfigError as e:
            raise HTTPException(status_code=400, detail=str(e)) from None
        return {"connector": added.public()}

    @api.delete("/api/connectors/{ident}")
    async def remove_connector(ident: str) -> dict[str, Any]:
        try:
            removed = await asyncio.to_thread(connectors.remove, ident)
        except (NotFound, ConfigError) as e:
            raise HTTPException(status_code=404, detail=str(e)) from None
        await asyncio.to_thread(hub.health.forget, removed.id)
        return {"removed": removed.id}

    @api.post("/api/connectors/{ident}/enabled")
    async def switch_connector(ident: str, body: Switch) -> dict[str, Any]:
        try:
            changed = await asyncio.to_thread(connectors.set_enabled, ident, body.enabled)
        except (NotFound, ConfigError) as e:
            raise HTTPException(status_code=404, detail=str(e)) from None
        if changed.enabled:
            await asyncio.to_thread(hub.health.reset, changed.id)
        return {"connector": changed.public()}

    @api.post("/api/connectors/{ident}/check")
    async def check_connector(ident: str) -> dict[str, Any]:
        try:
            listing = await hub.probe(ident)
        except ToolInputError as e:
            raise HTTPException(status_code=404, detail=str(e)) from None
        tools = [
            {"name": t.name, "description": t.description, "read_only": t.read_only, "closed_world": t.closed_world}
            for t in listing.tools
        ]
        return {"status": listing.status, "error": listing.error, "tools": tools}

    @api.post("/api/connectors/import")
    async def read_import(body: ImportText) -> dict[str, Any]:
        """The entries of a pasted file, as forms to confirm: nothing is added here."""
        try:
            entries = claude_desktop_entries(body.text)
        except ConfigError as e:
            raise HTTPException(status_code=400, detail=str(e)) from None
        return {"entries": entries}

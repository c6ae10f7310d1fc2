"""`/api/connectors`: the person's MCP servers — list with measured status, add (a local command only with
`confirmed: true`, sent by the form that showed it), remove, on/off, check now (reach it, whatever the back-off
said), and reading a Claude-Desktop `{"mcpServers": …}` file into forms to confirm one by one. Header and env
values go in and never come out: the list gives their names."""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

from orkas.adapter.connectors.config import claude_desktop_entries
from orkas.adapter.connectors.hub import ConnectorHub
from orkas.core.errors import ConfigError, NotFound, ToolInputError


class NewConnector(BaseModel):
    name: str = Field(min_length=1, max_length=40)
    url: str | None = Field(default=None, max_length=2000)
    headers: dict[str, str] = Field(default_factory=dict)
    command: str | list[str] | None = None
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = Field(default=None, max_length=4000)
    confirmed: bool = False  # the person saw the exact command in the form and said yes


class Switch(BaseModel):
    enabled: bool


class ImportText(BaseModel):
    text: str = Field(max_length=1_000_000)


def add_connector_routes(api: FastAPI, hub: ConnectorHub) -> None:
    connectors = hub.connectors

    @api.get("/api/connectors")
    async def list_connectors() -> dict[str, Any]:
        return {"connectors": await hub.status()}

    @api.post("/api/connectors")
    async def add_connector(body: NewConnector) -> dict[str, Any]:
        if body.command is not None and body.url is None and not body.confirmed:
            argv = shlex.split(body.command) if isinstance(body.command, str) else body.command
            raise HTTPException(
                status_code=400, detail=f"a local server runs `{shlex.join(argv)}` on this computer: confirm it first"
            )
        try:
            added = await asyncio.to_thread(
                connectors.add,
                body.name,
                url=body.url,
                command=body.command,
                headers=body.headers,
                env=body.env,
                cwd=body.cwd,
            )
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

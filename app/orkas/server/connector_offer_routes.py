"""What the person's connectors offer the composer: their prompts for the "/" menu (filled in, then put in the
message box for the person to read before sending) and their resources for the attach menu (read from the server
and kept as an attachment of the conversation: the model reads it as outside data, like any attached file)."""

from __future__ import annotations

import asyncio
import mimetypes
from dataclasses import asdict
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, Field

from orkas.adapter.connectors.hub import ConnectorHub
from orkas.adapter.conversations.attachments import AttachmentError
from orkas.adapter.conversations.runtime import ConversationRuntime
from orkas.core.errors import ToolInputError
from orkas.engine.tools.connectors import ConnectorError
from orkas.server.answers import config
from orkas.server.routing import Api, HTTPException
from orkas.server.services import Services


class PromptAsked(BaseModel):
    server: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=200)
    arguments: dict[str, str] = Field(default_factory=dict, max_length=64)


class ResourceAsked(BaseModel):
    server: str = Field(min_length=1, max_length=200)
    uri: str = Field(min_length=1, max_length=4000)


def _file_name(name: str, uri: str, mime: str | None) -> str:
    """The attachment's name: the resource's, with an extension its type implies when it has none."""
    base = PurePosixPath(name or uri.rstrip("/").rsplit("/", 1)[-1] or "resource").name or "resource"
    if "." not in base and mime:
        base += mimetypes.guess_extension(mime.split(";")[0].strip()) or (".md" if "markdown" in mime else "")
    return base


def add_connector_offer_routes(api: Api, hub: ConnectorHub, runtime: ConversationRuntime, services: Services) -> None:
    async def asked(request: Any) -> Any:
        try:
            return await request
        except ToolInputError as e:
            raise HTTPException(status_code=404, detail=str(e)) from None
        except ConnectorError as e:
            raise HTTPException(status_code=502, detail=str(e)) from None

    @api.get("/api/connectors/prompts")
    async def prompts() -> dict[str, Any]:
        return {"prompts": [p.public() for p in await hub.prompts()]}

    @api.post("/api/connectors/prompts/get")
    async def prompt(body: PromptAsked) -> dict[str, Any]:
        return {"text": await asked(hub.prompt(body.server, body.name, body.arguments))}

    @api.get("/api/connectors/resources")
    async def resources() -> dict[str, Any]:
        return {"resources": [r.public() for r in await hub.resources()]}

    @api.post("/api/conversations/{conversation_id}/attachments/resource", status_code=201)
    async def attach(conversation_id: str, body: ResourceAsked) -> dict[str, Any]:
        found = config(lambda: runtime.store.get(conversation_id))
        name, data, mime = await asked(hub.read_resource(body.server, body.uri))
        upload = await asyncio.to_thread(services.attachments.incoming, found, _file_name(name, body.uri, mime))
        try:
            await asyncio.to_thread(upload.write, data)
            return asdict(await asyncio.to_thread(upload.finish))
        except AttachmentError as e:
            await asyncio.to_thread(upload.abort)
            raise HTTPException(status_code=413, detail=str(e)) from None

"""What a connector offers besides tools: prompts — templates the person fills in from the composer's "/" menu —
and resources — files and records the person attaches, which reach the model as outside data like any attached
file. Listed on first use and kept until the server says a list changed (link.py listens for that)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from orkas.engine.tools.connectors import ConnectorError

if TYPE_CHECKING:
    import mcp

    from orkas.adapter.connectors.config import Connector

MAX_LISTED = 500  # prompts or resources per server: a listing beyond this is cut
MAX_RESOURCE = 10 * 1024 * 1024  # bytes of one attached resource


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True, slots=True)
class OfferedPrompt:
    server: str
    server_id: str
    name: str
    title: str
    description: str
    arguments: tuple[PromptArgument, ...] = ()

    def public(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class OfferedResource:
    server: str
    server_id: str
    uri: str
    name: str
    title: str
    description: str
    mime_type: str | None = None
    size: int | None = None

    def public(self) -> dict[str, Any]:
        return asdict(self)


def _not_offered(error: Exception) -> bool:
    """The server has no prompts (or resources) at all: an empty list, not a failure."""
    from mcp import MCPError
    from mcp_types import METHOD_NOT_FOUND

    return isinstance(error, MCPError) and error.code == METHOD_NOT_FOUND


async def _listed(fetch: Callable[[str | None], Awaitable[Any]], items: str) -> list[Any]:
    """Every page of a listing (`items`: the page's field), up to MAX_LISTED; a server without such a list: none."""
    found: list[Any] = []
    cursor: str | None = None
    try:
        for _ in range(50):
            page = await fetch(cursor)
            found.extend(getattr(page, items))
            cursor = page.next_cursor
            if cursor is None or len(found) >= MAX_LISTED:
                break
    except Exception as e:
        if _not_offered(e):
            return []
        raise
    return found[:MAX_LISTED]


async def list_prompts(client: mcp.Client, connector: Connector) -> tuple[OfferedPrompt, ...]:
    listed = await _listed(lambda cursor: client.list_prompts(cursor=cursor), "prompts")
    return tuple(
        OfferedPrompt(
            connector.name,
            connector.id,
            prompt.name,
            prompt.title or prompt.name,
            prompt.description or "",
            tuple(PromptArgument(a.name, a.description or "", bool(a.required)) for a in prompt.arguments or ()),
        )
        for prompt in listed
    )


async def list_resources(client: mcp.Client, connector: Connector) -> tuple[OfferedResource, ...]:
    listed = await _listed(lambda cursor: client.list_resources(cursor=cursor), "resources")
    return tuple(
        OfferedResource(
            connector.name,
            connector.id,
            str(resource.uri),
            resource.name,
            resource.title or resource.name,
            resource.description or "",
            resource.mime_type,
            resource.size,
        )
        for resource in listed
    )


def prompt_text(result: Any) -> str:
    """A filled-in prompt as the text the composer shows: each message's words (a second speaker's said as such),
    embedded resources' text, anything else named and left out."""
    parts: list[str] = []
    for message in result.messages or ():
        content = message.content
        kind = getattr(content, "type", "")
        if kind == "text":
            text = content.text
        elif kind == "resource" and getattr(content.resource, "text", None) is not None:
            text = f"[{content.resource.uri}]\n{content.resource.text}"
        else:
            text = f"[{kind or 'unknown'} content left out]"
        parts.append(text if message.role == "user" else f"({message.role}) {text}")
    return "\n\n".join(parts)


def resource_bytes(result: Any, uri: str) -> tuple[bytes, str | None]:
    """The first content of a read resource, as bytes (text encoded, a blob decoded), and its type."""
    contents = list(result.contents or ())
    if not contents:
        raise ConnectorError(f"{uri}: the server sent nothing")
    first = contents[0]
    if getattr(first, "text", None) is not None:
        data = first.text.encode()
    else:
        try:
            data = base64.b64decode(first.blob, validate=True)
        except (binascii.Error, ValueError, AttributeError):
            raise ConnectorError(f"{uri}: the server sent content that is not valid base64") from None
    if len(data) > MAX_RESOURCE:
        raise ConnectorError(f"{uri} is larger than {MAX_RESOURCE // (1024 * 1024)} MB: not attached")
    return data, first.mime_type

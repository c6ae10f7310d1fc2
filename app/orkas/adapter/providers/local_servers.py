"""Model servers on this machine (Ollama, LM Studio): found by asking their usual ports for models."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

KNOWN: tuple[tuple[str, str], ...] = (
    ("ollama", "http://127.0.0.1:11434/v1"),
    ("lmstudio", "http://127.0.0.1:1234/v1"),
)


@dataclass(frozen=True, slots=True)
class LocalServer:
    name: str
    base_url: str
    models: tuple[str, ...]


PROBE_SECONDS = 0.5


async def detect(servers: Sequence[tuple[str, str]] = KNOWN) -> list[LocalServer]:
    """The servers that answer, with their models. Never raises: a silent port is simply absent."""
    import httpx  # only when someone looks

    async with httpx.AsyncClient(timeout=PROBE_SECONDS) as client:
        found = await asyncio.gather(*(_probe(client, name, url) for name, url in servers))
    return [server for server in found if server is not None]


async def _probe(client: httpx.AsyncClient, name: str, base_url: str) -> LocalServer | None:
    import httpx  # already loaded by `detect`

    try:
        response = await client.get(base_url.rstrip("/") + "/models")
        response.raise_for_status()
        models = tuple(str(m["id"]) for m in response.json().get("data", []) if "id" in m)
    except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return LocalServer(name, base_url, models)

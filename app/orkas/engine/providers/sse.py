"""What the HTTP wire adapters share: their client, made on first use, and the decoded `data:` payload of a
server-sent event."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from orkas.core.errors import ProviderError

if TYPE_CHECKING:
    import httpx

    from orkas.engine.providers.base import ProviderSpec


class LazyClient:
    """An `httpx.AsyncClient` made on first use: importing httpx and building its TLS context cost ~80 ms,
    which `orkas run` pays after saying run_start rather than before (issue 38)."""

    def __init__(self, base_url: str, headers: Mapping[str, str], spec: ProviderSpec) -> None:
        self.base_url = base_url
        self._headers = dict(headers)
        self._timeouts = (spec.read_timeout, spec.connect_timeout)
        self._client: httpx.AsyncClient | None = None

    def get(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            read, connect = self._timeouts
            self._client = httpx.AsyncClient(
                base_url=self.base_url, headers=self._headers, timeout=httpx.Timeout(read, connect=connect)
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


def decode_data(data: str, provider: str) -> dict[str, Any]:
    """One event's JSON object; anything else is a stream error that names what arrived."""
    try:
        value = json.loads(data)
    except json.JSONDecodeError as e:
        raise ProviderError(f"malformed stream data: {data[:200]!r}", kind="stream", provider=provider) from e
    if not isinstance(value, dict):
        raise ProviderError(f"unexpected stream data: {data[:200]!r}", kind="stream", provider=provider)
    return value

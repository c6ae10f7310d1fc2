"""What the HTTP wire adapters share: their client, made on first use, the decoded `data:` payload of a server-sent
event, and the failures they read — an error status's body, or an `error` in the stream."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from orkas.core.errors import ProviderError
from orkas.engine.providers.errors import provider_error

if TYPE_CHECKING:
    import ssl

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
                base_url=self.base_url,
                headers=self._headers,
                timeout=httpx.Timeout(read, connect=connect),
                verify=tls_context(),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS settings every provider client shares (httpx's own: certifi's authorities, or SSL_CERT_FILE/DIR), made
    once per process: reading the authorities costs ~25 ms of CPU, which each turn's new client paid on the event
    loop (a third of the server's loop time in the soak, bench/soak.py)."""
    import httpx

    return httpx.create_ssl_context()


def decode_data(data: str, provider: str) -> dict[str, Any]:
    """One event's JSON object; anything else is a stream error that names what arrived."""
    try:
        value = json.loads(data)
    except json.JSONDecodeError as e:
        raise ProviderError(f"malformed stream data: {data[:200]!r}", kind="stream", provider=provider) from e
    if not isinstance(value, dict):
        raise ProviderError(f"unexpected stream data: {data[:200]!r}", kind="stream", provider=provider)
    return value


async def http_error(response: httpx.Response, provider: str) -> ProviderError:
    """An error status, classified from its body: `{"error": {"message", "type" or "code"}}` (Anthropic and the
    OpenAI-compatible servers alike), `{"error": "text"}`, or the raw body's start."""
    raw = (await response.aread()).decode("utf-8", errors="replace")
    message, error_type = raw[:500], None
    try:
        error = json.loads(raw).get("error")
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict):
        message = str(error.get("message") or message)
        error_type = error.get("code") or error.get("type")
    elif isinstance(error, str):
        message = error
    return provider_error(
        provider, status=response.status_code, message=message, error_type=error_type, headers=response.headers
    )


def stream_error(error: Any, provider: str) -> ProviderError:
    """An `error` inside a 200 stream (overloaded mid-answer): only its body says what it was; an integer `code` is
    the status a server meant."""
    if isinstance(error, dict):
        code = error.get("code")
        status = code if isinstance(code, int) else None
        error_type = error.get("type") or (code if isinstance(code, str) else None)
        return provider_error(
            provider, status=status, message=str(error.get("message") or error), error_type=error_type
        )
    return provider_error(provider, status=None, message=str(error))

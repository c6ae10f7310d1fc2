"""The Anthropic Messages API over httpx, streaming (server-sent events).

Spoken directly rather than through the `anthropic` SDK: importing the SDK loads ~3,300 modules, a
second of CPU on every start of `orkas run` before the first word could stream (issue 38, measured in
bench/cli_start.py). The wire is small and documented — one POST, one SSE stream, one error shape — and
the SDK stays the tests' oracle: tests/engine/test_anthropic_oracle.py checks that the SDK and this
adapter read every scripted reply of the fake server alike.

No retries here: the run loop's policy is the only one, so every wait is visible and abortable.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from orkas.core.errors import ProviderError
from orkas.engine.providers.anthropic.request import build_params
from orkas.engine.providers.anthropic.stream import StreamAssembler
from orkas.engine.providers.base import Capabilities, ProviderRequest, ProviderSpec, StreamChunk, url_credentials
from orkas.engine.providers.sse import LazyClient, decode_data, http_error, stream_error

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2026-10-21"  # what the pinned SDK (the tests' oracle) sends


class AnthropicProvider:
    def __init__(self, spec: ProviderSpec) -> None:
        self.spec = spec
        base_url, gateway = url_credentials(spec.base_url)
        self._base_url = base_url
        headers = {
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
            **spec.headers,
            **gateway,
        }
        if spec.api_key:
            headers["authorization"] = f"Bearer {spec.api_key}"
        self._client = LazyClient((base_url or DEFAULT_BASE_URL).rstrip("/") + "/", headers, spec)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def capabilities(self) -> Capabilities:
        return self.spec.capabilities

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamChunk]:
        assembler = StreamAssembler(self.name, request.model)
        import httpx

        body = json.dumps({**build_params(request), "stream": True}, ensure_ascii=False).encode()
        try:
            headers = await self._auth()
            async with self._client.get().stream("POST", "v1/messages", content=body, headers=headers) as response:
                if response.status_code >= 400:
                    raise await http_error(response, self.name)
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue  # `event:` names repeat the data's own "type"; blank lines end an event
                    event = decode_data(line[5:].strip(), self.name)
                    if event.get("type") == "error":
                        raise stream_error(event.get("error"), self.name)
                    for chunk in assembler.feed(event):
                        yield chunk
        except httpx.TimeoutException as e:
            raise ProviderError("the request timed out", kind="timeout", provider=self.name) from e
        except httpx.ConnectError as e:
            raise ProviderError(f"could not reach {self._where()}", kind="network", provider=self.name) from e
        except httpx.TransportError as e:
            raise ProviderError(
                f"the connection broke while streaming ({type(e).__name__})",
                kind="network",
                provider=self.name,
            ) from e
        if not assembler.finished:
            raise ProviderError("the stream ended before message_stop", kind="network", provider=self.name)

    async def validate_auth(self) -> None:
        import httpx

        try:
            response = await self._client.get().get("v1/models", params={"limit": 1}, headers=await self._auth())
        except httpx.TransportError as e:
            raise ProviderError(f"could not reach {self._where()}", kind="network", provider=self.name) from e
        if response.status_code >= 400:
            raise await http_error(response, self.name)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _auth(self) -> dict[str, str] | None:
        """A signed-in provider's fresh bearer token, asked for before each request (in place of the key's)."""
        return {"authorization": f"Bearer {await self.spec.token()}"} if self.spec.token else None

    def _where(self) -> str:
        return self._base_url or "api.anthropic.com"

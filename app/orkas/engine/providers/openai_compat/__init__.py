"""OpenAI-compatible chat completions over httpx with SSE.

One adapter for every server that speaks this wire format; what differs between vendors (base
URL, key, extra headers, capabilities) is data in `ProviderSpec`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from orkas.core.errors import ProviderError
from orkas.engine.providers.base import Capabilities, ProviderRequest, ProviderSpec, StreamChunk, url_credentials
from orkas.engine.providers.openai_compat.request import build_body
from orkas.engine.providers.openai_compat.stream import ChunkAssembler
from orkas.engine.providers.sse import LazyClient, decode_data, http_error, stream_error

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAICompatProvider:
    def __init__(self, spec: ProviderSpec) -> None:
        self.spec = spec
        base_url, gateway = url_credentials(spec.base_url or DEFAULT_BASE_URL)
        headers = {"Content-Type": "application/json", **spec.headers, **gateway}
        if spec.api_key:
            headers["Authorization"] = f"Bearer {spec.api_key}"
        self._client = LazyClient((base_url or DEFAULT_BASE_URL).rstrip("/") + "/", headers, spec)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def capabilities(self) -> Capabilities:
        return self.spec.capabilities

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamChunk]:
        import httpx

        assembler = ChunkAssembler(self.name, request.model)
        body = json.dumps(build_body(request, self.spec), ensure_ascii=False).encode()
        try:
            headers = {"Authorization": f"Bearer {await self.spec.token()}"} if self.spec.token else None
            async with self._client.get().stream("POST", "chat/completions", content=body, headers=headers) as response:
                if response.status_code >= 400:
                    raise await http_error(response, self.name)
                finished = False
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        finished = True
                        break
                    chunk = decode_data(data, self.name)
                    if "error" in chunk:
                        raise stream_error(chunk["error"], self.name)
                    for out in assembler.feed(chunk):
                        yield out
        except httpx.TimeoutException as e:
            raise ProviderError("the request timed out", kind="timeout", provider=self.name) from e
        except httpx.ConnectError as e:
            raise ProviderError(f"could not reach {self._client.base_url}", kind="network", provider=self.name) from e
        except httpx.TransportError as e:
            raise ProviderError(
                f"the connection broke while streaming ({type(e).__name__})",
                kind="network",
                provider=self.name,
            ) from e
        if not finished and assembler.finish is None:
            raise ProviderError("the stream ended before the response was complete", kind="network", provider=self.name)
        yield assembler.end()

    async def validate_auth(self) -> None:
        import httpx

        try:
            response = await self._client.get().get("models")
        except httpx.TransportError as e:
            raise ProviderError(f"could not reach {self._client.base_url}", kind="network", provider=self.name) from e
        if response.status_code >= 400:
            raise await http_error(response, self.name)

    async def aclose(self) -> None:
        await self._client.aclose()

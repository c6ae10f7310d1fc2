"""The Anthropic Messages API through the official `anthropic` SDK (async, streaming).

The SDK's own retries are off (`max_retries=0`): the run loop's policy is the only one, so every
wait is visible and abortable.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2

from orkas.core.errors import ProviderError
from orkas.engine.providers.anthropic.request import build_params
from orkas.engine.providers.anthropic.stream import StreamAssembler
from orkas.engine.providers.base import Capabilities, ProviderRequest, ProviderSpec, StreamChunk, url_credentials
from orkas.engine.providers.errors import provider_error


class AnthropicProvider:
    def __init__(self, spec: ProviderSpec) -> None:
        self.spec = spec
        self._base_url, gateway = url_credentials(spec.base_url)
        self._client = anthropic.AsyncAnthropic(
            api_key=spec.api_key or "",
            base_url=self._base_url,
            max_retries=0,
            timeout=httpx2.Timeout(spec.read_timeout, connect=spec.connect_timeout),
            default_headers={**spec.headers, **gateway},
        )

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def capabilities(self) -> Capabilities:
        return self.spec.capabilities

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamChunk]:
        assembler = StreamAssembler(self.name, request.model)
        try:
            headers = {"Authorization": f"Bearer {await self.spec.token()}"} if self.spec.token else None
            events = await self._client.messages.create(**build_params(request), stream=True, extra_headers=headers)
            async with events:
                async for event in events:
                    for chunk in assembler.feed(event):
                        yield chunk
        except anthropic.APIStatusError as e:
            raise self._status_error(e) from e
        except anthropic.APITimeoutError as e:
            raise ProviderError("the request timed out", kind="timeout", provider=self.name) from e
        except anthropic.APIConnectionError as e:
            raise ProviderError(f"could not reach {self._where()}", kind="network", provider=self.name) from e
        except httpx2.TimeoutException as e:
            raise ProviderError("the response stalled", kind="timeout", provider=self.name) from e
        except httpx2.TransportError as e:
            raise ProviderError(
                f"the connection broke while streaming ({type(e).__name__})",
                kind="network",
                provider=self.name,
            ) from e
        if not assembler.finished:
            raise ProviderError("the stream ended before message_stop", kind="network", provider=self.name)

    async def validate_auth(self) -> None:
        try:
            await self._client.models.list(limit=1)
        except anthropic.APIStatusError as e:
            raise self._status_error(e) from e
        except anthropic.APIConnectionError as e:
            raise ProviderError(f"could not reach {self._where()}", kind="network", provider=self.name) from e

    async def aclose(self) -> None:
        await self._client.close()

    def _where(self) -> str:
        return self._base_url or "api.anthropic.com"

    def _status_error(self, e: anthropic.APIStatusError) -> ProviderError:
        body: Any = e.body
        error_type = e.type
        message = e.api_message or (str(body) if body else str(e))
        # An SSE `error` event arrives on a 200 response; only its body says what it was.
        status = e.status_code if e.status_code != 200 else None
        return provider_error(
            self.name, status=status, message=message, error_type=error_type, headers=e.response.headers
        )

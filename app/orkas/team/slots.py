"""The global cap on concurrent model calls. A slot is held only while a response streams — never while
a tool runs — so a commander waiting on its dispatched agents holds none, and nested runs can never
deadlock on slots their parents hold."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from orkas.engine.providers.base import Capabilities, Provider, ProviderRequest, StreamChunk
from orkas.engine.providers.registry import ProviderRegistry


class LimitedProvider:
    def __init__(self, inner: Provider, slots: asyncio.Semaphore) -> None:
        self.inner = inner
        self.slots = slots

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamChunk]:
        async with self.slots:
            async for chunk in self.inner.stream(request):
                yield chunk

    async def validate_auth(self) -> None:
        await self.inner.validate_auth()

    async def aclose(self) -> None:
        await self.inner.aclose()


def limited(registry: ProviderRegistry, slots: asyncio.Semaphore) -> ProviderRegistry:
    """The same providers (and default), each call holding one of `slots` while it streams."""
    wrapped = {name: LimitedProvider(registry.get(name), slots) for name in registry.names}
    return ProviderRegistry(wrapped, default=registry.default_name)

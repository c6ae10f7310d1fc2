"""A provider whose SDK is imported off the start path.

Importing the anthropic SDK takes 1–2.5 s on a busy 2-core machine. `Deferred` knows the provider's
name and capabilities from its spec (no SDK needed to build an agent, create a session or say
`run_start`), starts importing the adapter module on a background thread the moment it is created,
and builds the real provider on first use, waiting for that import on a worker thread so an event
loop serving other conversations never stalls on it.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from orkas.engine.providers.base import Capabilities, Provider, ProviderRequest, ProviderSpec, StreamChunk

_imports: dict[str, threading.Thread] = {}
_lock = threading.Lock()


def prefetch(module: str) -> threading.Thread:
    """Import `module` on a daemon thread (once per process); join the thread to wait for it."""
    with _lock:
        thread = _imports.get(module)
        if thread is None:
            thread = threading.Thread(target=_quiet_import, args=(module,), name=f"import-{module}", daemon=True)
            _imports[module] = thread
            thread.start()
        return thread


def _quiet_import(module: str) -> None:
    try:
        importlib.import_module(module)
    except Exception:  # the real import, on first use, raises it where it can be reported
        pass


class Deferred:
    def __init__(self, spec: ProviderSpec, module: str, build: Callable[[Any, ProviderSpec], Provider]) -> None:
        self.spec = spec
        self._module = module
        self._build = build
        self._real: Provider | None = None
        self._loading: asyncio.Lock | None = None
        prefetch(module)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def capabilities(self) -> Capabilities:
        return self.spec.capabilities

    async def provider(self) -> Provider:
        if self._real is None:
            self._loading = self._loading or asyncio.Lock()
            async with self._loading:
                if self._real is None:
                    await asyncio.to_thread(prefetch(self._module).join)
                    self._real = self._build(importlib.import_module(self._module), self.spec)
        return self._real

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamChunk]:
        provider = await self.provider()
        async for chunk in provider.stream(request):
            yield chunk

    async def validate_auth(self) -> None:
        await (await self.provider()).validate_auth()

    async def aclose(self) -> None:
        if self._real is not None:
            await self._real.aclose()

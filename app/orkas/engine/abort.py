"""Cancellation that a person can trigger at any moment: `AbortSignal`, and `pump`, which makes a
producer (a model stream, a running tool) stop the instant the signal fires.

The signal is bound to the event loop that runs the agent. `abort()` must be called from that
loop; other threads (a UI, a signal handler) use `abort_threadsafe()`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class AbortSignal:
    def __init__(self) -> None:
        self._reason: str | None = None
        self._callbacks: list[Callable[[], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event: asyncio.Event | None = None

    @property
    def aborted(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str:
        return self._reason or ""

    def abort(self, reason: str = "stopped by the user") -> None:
        """Idempotent: the first reason wins."""
        if self._reason is not None:
            return
        self._reason = reason
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def abort_threadsafe(self, reason: str = "stopped by the user") -> None:
        if self._loop is None:
            self.abort(reason)
        else:
            self._loop.call_soon_threadsafe(self.abort, reason)

    def bind(self) -> None:
        """Remember the running loop so other threads can abort; called by the run loop."""
        self._loop = asyncio.get_running_loop()

    def on_abort(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` when aborted (at once if already). Returns a function that unregisters."""
        if self.aborted:
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def sleep(self, seconds: float) -> bool:
        """Sleep, waking early on abort. Returns True when the full time passed."""
        if self.aborted:
            return False
        if self._event is None:
            self._event = asyncio.Event()
        try:
            await asyncio.wait_for(self._event.wait(), timeout=seconds)
        except TimeoutError:
            return True
        return False


class Aborted(Exception):
    """Raised inside `pump` consumers when the signal fired; never escapes the run loop."""


class _End:
    __slots__ = ()


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


_END = _End()


class Pump(Generic[T]):
    """Drain an async iterator in its own task, handing items over a queue.

    The consumer awaits only the queue, so an abort wakes it at once and cancels the producer,
    without a per-item task or `asyncio.wait`.
    """

    def __init__(self, source: AsyncIterator[T], signal: AbortSignal) -> None:
        self._queue: asyncio.Queue[T | _End | _Failure] = asyncio.Queue()
        self._task = asyncio.create_task(self._produce(source))
        self._signal = signal
        self._unregister = signal.on_abort(self._on_abort)

    async def _produce(self, source: AsyncIterator[T]) -> None:
        put = self._queue.put_nowait
        try:
            async for item in source:
                put(item)
        except asyncio.CancelledError:
            raise
        except BaseException as error:  # handed to the consumer, which decides
            put(_Failure(error))
        else:
            put(_END)
        finally:
            aclose = getattr(source, "aclose", None)
            if aclose is not None:
                await aclose()

    def _on_abort(self) -> None:
        self._task.cancel()
        self._queue.put_nowait(_END)

    def __aiter__(self) -> Pump[T]:
        return self

    async def __anext__(self) -> T:
        if self._signal.aborted:
            raise Aborted(self._signal.reason)
        item = await self._queue.get()
        if isinstance(item, _End):
            if self._signal.aborted:
                raise Aborted(self._signal.reason)
            raise StopAsyncIteration
        if isinstance(item, _Failure):
            raise item.error
        return item

    async def aclose(self) -> None:
        self._unregister()
        if not self._task.done():
            self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            # Our own cancellation of the producer; re-raise only if *we* are being cancelled.
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
        except Exception:  # the producer's failure was already handed over
            pass

"""The HTTP connection guard: how long a client may take and how many may be open at once.

uvicorn's h11 protocol only times out a connection that is idle *between* requests, and any byte
received cancels that timer — so a client that opens a socket and sends nothing, or trickles a header
a byte at a time, holds it forever. Here every request's head must arrive whole within
HEADER_TIMEOUT of the connection opening (or of the previous response), and past
MAX_CONNECTIONS the connection that has waited longest without a request is closed to make room.
Bodies have their own idle limit in `security.LocalOnly`.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Generator
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0  # seconds for a request line and headers; a local client needs milliseconds
MAX_CONNECTIONS = 64  # the window, a browser tab or two and a phone use a handful
CLOSING_GRACE = 0.5  # seconds a closing connection may wait for its peer when the server stops
WS_MAX_MESSAGE = 1024 * 1024  # the UI's messages are a few kilobytes; uvicorn's default is 16 MB


class GuardedH11(H11Protocol):
    """H11Protocol with a deadline for each request's head and a cap on open connections."""

    header_timeout = HEADER_TIMEOUT
    max_connections = MAX_CONNECTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()
        if len(self.connections) > self.max_connections:
            self._make_room()

    @property
    def _waiting(self) -> dict[GuardedH11, None]:
        """Connections waiting for a request head, oldest first (shared by the server's connections)."""
        waiting: dict[GuardedH11, None] | None = getattr(self.server_state, "orkas_waiting", None)
        if waiting is None:
            waiting = {}
            self.server_state.orkas_waiting = waiting  # type: ignore[attr-defined]
        return waiting

    def _make_room(self) -> None:
        """Over the cap, the connection that has waited longest without sending a request goes — a
        flood of silent sockets only ever evicts its own, and the app's next request still gets in."""
        oldest = next(iter(self._waiting), self)
        oldest._too_slow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the head is in: the route (or the body limit) takes over
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm()  # the next request's head gets the same deadline, however it trickles

    def shutdown(self) -> None:
        """The server stops: an idle kept-alive connection is dropped at once. Closed politely, a TLS one (the mirror)
        waited for the browser's own close_notify, which often never came: the server then waited its whole grace
        period for connections with nothing left to send (an ERROR line on quitting with a phone open)."""
        idle = self.cycle is None or self.cycle.response_complete
        if idle and not self.transport.is_closing() and self.transport.get_extra_info("sslcontext") is not None:
            self.transport.abort()
            return
        super().shutdown()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._disarm()  # the socket now belongs to the WebSocket protocol
        super().handle_websocket_upgrade(event)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.header_timeout, self._too_slow)
        self._waiting[self] = None

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
            self._waiting.pop(self, None)

    def _too_slow(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.close()


class Server(uvicorn.Server):
    """A uvicorn server that leaves Ctrl+C and SIGTERM to its host (`host.py`). Left to itself, each of the
    two servers (the API, the mirror) took the signal handlers in turn and raised the signal again once it
    stopped: the next took it, and the last one raised it into asyncio, which cancelled the host in the middle
    of its clean-up (a CancelledError traceback with a phone connected) — or, for SIGTERM, killed the process
    before the runs and the connectors were shut down."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """A TLS connection asked to close (an idle one, a WebSocket after its close handshake) then waits for the
        browser's close_notify, which often never comes: the server waited its whole grace period for it (an
        ERROR line on quitting with a phone open, 1 run in 10). Whatever is still closing a moment later has
        nothing left to send, and is cut."""
        sweeper = asyncio.ensure_future(self._cut_the_closing())
        try:
            await super().shutdown(sockets)
        finally:
            sweeper.cancel()

    async def _cut_the_closing(self) -> None:
        await asyncio.sleep(CLOSING_GRACE)
        while True:
            for connection in list(self.server_state.connections):
                transport = getattr(connection, "transport", None)
                if transport is not None and transport.is_closing():
                    transport.abort()
            await asyncio.sleep(0.1)


def server_config(app: Any, **extra: Any) -> uvicorn.Config:
    """The one way this app runs uvicorn (the desktop API, the phone mirror with its TLS files in `extra`):
    our guarded protocol, capped WebSocket messages, no lifespan, no access log."""
    return uvicorn.Config(
        app,
        log_level="warning",
        log_config=None,  # uvicorn's records go through our handlers and their redaction, not around them
        access_log=False,
        lifespan="off",
        # No proxy stands in front of either server: uvicorn would otherwise take X-Forwarded-For from 127.0.0.1 as
        # the client's address, and a local process could dodge, or aim, the mirror's per-address pairing lockout.
        proxy_headers=False,
        timeout_graceful_shutdown=3,
        http=GuardedH11,
        ws_max_size=WS_MAX_MESSAGE,
        ws_per_message_deflate=False,  # events are small: compressing each cost more CPU than it saved
        **extra,
    )

"""Pushing events down a WebSocket: shared by the conversation, knowledge-base and phone-mirror sockets.

Every event of a streaming reply goes down every watching socket, so the per-event path is kept short:
one `await queue.get()` and one send (orjson, text frame) — the client's going away is listened for
once per socket, by a second task, not raced against each event (an `asyncio.wait` per event cost
more than the send itself; bench/mirror.py measures it with five phones attached).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

import orjson
from starlette.websockets import WebSocketDisconnect

from orkas.server.routing import WebSocket


async def forward(
    socket: WebSocket,
    first: list[dict[str, Any]],
    queue: asyncio.Queue[dict[str, Any]],
) -> None:
    """Send `first`, then whatever arrives on `queue`, one message per event, until the client goes
    away. A closed tab frees its handler at once (and lets the server shut down without waiting for
    the next event). Phones get frames instead (mirror/fanout.py)."""
    await until_gone(socket, _send_all(socket, first, queue))


async def until_gone(socket: WebSocket, sender: Coroutine[Any, Any, None]) -> None:
    """Run `sender` until it ends or the client goes away, whichever is first."""
    gone = asyncio.ensure_future(_until_disconnect(socket))
    sending = asyncio.ensure_future(sender)
    try:
        await asyncio.wait({gone, sending}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (gone, sending):
            task.cancel()
        for task in (gone, sending):
            with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, RuntimeError):
                await task


async def _send_all(socket: WebSocket, first: list[dict[str, Any]], queue: asyncio.Queue[dict[str, Any]]) -> None:
    try:
        for event in first:
            await socket.send_text(orjson.dumps(event).decode())
        while True:
            event = await queue.get()
            await socket.send_text(orjson.dumps(event).decode())
    except (WebSocketDisconnect, RuntimeError, OSError):
        return  # the client went away mid-send


async def _until_disconnect(socket: WebSocket) -> None:
    while True:
        message = await socket.receive()
        if message["type"] == "websocket.disconnect":
            return

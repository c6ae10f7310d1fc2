"""Pushing events down a WebSocket: shared by the conversation and knowledge-base event sockets."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect


async def forward(socket: WebSocket, first: list[dict[str, Any]], queue: asyncio.Queue[dict[str, Any]]) -> None:
    """Send `first`, then whatever arrives on `queue`, until the client goes away. The going away is
    listened for while waiting: a closed tab must free its handler at once (and let the server shut
    down without waiting for the next event)."""
    gone = asyncio.ensure_future(_until_disconnect(socket))
    try:
        for event in first:
            await socket.send_json(event)
        while not gone.done():
            waiting = asyncio.ensure_future(queue.get())
            await asyncio.wait({waiting, gone}, return_when=asyncio.FIRST_COMPLETED)
            if not waiting.done():
                waiting.cancel()
                break
            await socket.send_json(waiting.result())
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        gone.cancel()


async def _until_disconnect(socket: WebSocket) -> None:
    while True:
        message = await socket.receive()
        if message["type"] == "websocket.disconnect":
            return

"""Pushing events down a WebSocket: shared by the conversation, knowledge-base and phone-mirror sockets.

Every event of a streaming reply goes down every watching socket, so the per-event path is kept short:
one `await queue.get()` and one send (orjson, text frame) — the client's going away is listened for
once per socket, by a second task, not raced against each event (an `asyncio.wait` per event cost
more than the send itself; bench/mirror.py measures it with five phones attached).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import orjson
from fastapi import WebSocket, WebSocketDisconnect

BACKLOG_CHUNK = 500  # events per message when a batched socket catches up
JOINABLE = frozenset({"text_delta", "thinking_delta"})


async def forward(
    socket: WebSocket,
    first: list[dict[str, Any]],
    queue: asyncio.Queue[dict[str, Any]],
    *,
    batch: float = 0.0,
) -> None:
    """Send `first`, then whatever arrives on `queue`, until the client goes away. A closed tab frees
    its handler at once (and lets the server shut down without waiting for the next event).

    With `batch` (seconds), events are gathered that long after the first of a burst and sent as one
    message, a JSON array in order (a catch-up backlog in arrays of BACKLOG_CHUNK), consecutive deltas
    joined (`coalesce`): a phone needs no more than a frame's worth of updates, and each message and
    each byte of it costs the computer (a TLS write) and the phone (parsing, battery)."""
    gone = asyncio.ensure_future(_until_disconnect(socket))
    sender = _send_batched(socket, first, queue, batch) if batch else _send_all(socket, first, queue)
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


async def _send_batched(
    socket: WebSocket, first: list[dict[str, Any]], queue: asyncio.Queue[dict[str, Any]], window: float
) -> None:
    try:
        for start in range(0, len(first), BACKLOG_CHUNK):
            await socket.send_text(orjson.dumps(coalesce(first[start : start + BACKLOG_CHUNK])).decode())
        while True:
            burst = [await queue.get()]
            await asyncio.sleep(window)
            while not queue.empty():
                burst.append(queue.get_nowait())
            burst = coalesce(burst)
            await socket.send_text(orjson.dumps(burst if len(burst) > 1 else burst[0]).decode())
    except (WebSocketDisconnect, RuntimeError, OSError):
        return


async def _until_disconnect(socket: WebSocket) -> None:
    while True:
        message = await socket.receive()
        if message["type"] == "websocket.disconnect":
            return


def coalesce(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive deltas of one kind from one speaker joined into one event carrying the last one's
    `seq`: what a view draws is the same, and a client that resumes after that `seq` misses nothing.
    A streamed reply is hundreds of small deltas a second; a frame of them becomes one event. The
    events themselves are shared with every other view and are not changed."""
    joined: list[dict[str, Any]] = []
    for event in events:
        last = joined[-1] if joined else None
        if (
            last is not None
            and event["type"] in JOINABLE
            and event["type"] == last["type"]
            and event.keys() == last.keys()
            and event.get("actor") == last.get("actor")
            and event.get("conversation") == last.get("conversation")
        ):
            joined[-1] = {**last, "seq": event["seq"], "text": last["text"] + event["text"]}
        else:
            joined.append(event)
    return joined

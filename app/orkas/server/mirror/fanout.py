"""Every phone watching one conversation shares one subscription: events are gathered a frame at a time
(PHONE_FRAME in mirror/app.py), consecutive deltas joined (`coalesce`), encoded once, and the same text goes
down each phone's socket as a JSON array. A phone needs no more than a frame's worth of updates, and
each message and each byte costs the computer (a TLS write) and the phone (parsing, battery); a phone
costs a send per frame, not a timer, an encoding and a queue of its own (bench/mirror.py: five phones
on a streaming reply cost 1.02× the CPU of none, 1.10× with a frame per phone, 1.76× with a message
per event).

A phone joins with the sequence number it has seen: it gets the backlog after it, then the shared frames,
with any overlap between the two dropped by sequence number, so nothing shows twice or goes missing.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Protocol

import orjson
from starlette.websockets import WebSocketDisconnect

from orkas.adapter.wire import JOINABLE
from orkas.server.routing import WebSocket

BACKLOG_CHUNK = 500  # events per message while a phone catches up
Frame = tuple[list[dict[str, Any]], str]  # the events and their one encoding


class Subscribable(Protocol):
    def subscribe(
        self, conversation_id: str, after: int = 0
    ) -> tuple[list[dict[str, Any]], asyncio.Queue[dict[str, Any]]]: ...

    def unsubscribe(self, conversation_id: str, queue: asyncio.Queue[dict[str, Any]]) -> None: ...


class _Shared:
    def __init__(self, runtime: Subscribable, conversation: str, window: float) -> None:
        self.runtime = runtime
        self.conversation = conversation
        self.window = window
        self.outboxes: set[asyncio.Queue[Frame]] = set()
        _, self.queue = runtime.subscribe(conversation, sys.maxsize)  # from now on
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            frame = [await self.queue.get()]
            await asyncio.sleep(self.window)
            while not self.queue.empty():
                frame.append(self.queue.get_nowait())
            joined = coalesce(frame)
            shared = (frame, orjson.dumps(joined if len(joined) > 1 else joined[0]).decode())
            for outbox in self.outboxes:
                outbox.put_nowait(shared)

    def close(self) -> None:
        self.task.cancel()
        self.runtime.unsubscribe(self.conversation, self.queue)


class Fanout:
    def __init__(self, runtime: Subscribable, window: float) -> None:
        self.runtime = runtime
        self.window = window
        self.shared: dict[str, _Shared] = {}

    def join(self, conversation: str, after: int) -> tuple[list[dict[str, Any]], asyncio.Queue[Frame]]:
        """The backlog after `after` and the phone's outbox of shared frames (joined first, then the
        backlog taken, with no await between: whatever is published after is in a frame)."""
        shared = self.shared.get(conversation)
        if shared is None:
            shared = self.shared[conversation] = _Shared(self.runtime, conversation, self.window)
        outbox: asyncio.Queue[Frame] = asyncio.Queue()
        shared.outboxes.add(outbox)
        backlog, probe = self.runtime.subscribe(conversation, after)
        self.runtime.unsubscribe(conversation, probe)
        return backlog, outbox

    def leave(self, conversation: str, outbox: asyncio.Queue[Frame]) -> None:
        shared = self.shared.get(conversation)
        if shared is None:
            return
        shared.outboxes.discard(outbox)
        if not shared.outboxes:
            shared.close()
            del self.shared[conversation]


async def send_frames(
    socket: WebSocket, backlog: list[dict[str, Any]], outbox: asyncio.Queue[Frame], after: int
) -> None:
    """A phone's socket: the backlog in chunks, then each shared frame (trimmed where it overlaps)."""
    sent = after
    try:
        for start in range(0, len(backlog), BACKLOG_CHUNK):
            chunk = backlog[start : start + BACKLOG_CHUNK]
            await socket.send_text(orjson.dumps(coalesce(chunk)).decode())
            sent = max(sent, chunk[-1]["seq"])
        while True:
            events, text = await outbox.get()
            if events[-1]["seq"] <= sent:
                continue  # the backlog had all of it
            if events[0]["seq"] <= sent:
                events = [e for e in events if e["seq"] > sent]
                text = orjson.dumps(coalesce(events)).decode()
            await socket.send_text(text)
            sent = events[-1]["seq"]
    except (WebSocketDisconnect, RuntimeError, OSError):
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

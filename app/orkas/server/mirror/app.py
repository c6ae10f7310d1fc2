"""The phone mirror's API: the conversations of this computer, watched and steered from a paired phone.

Served on its own port over TLS (host.py), behind `MirrorGuard` (security.py). Versioned under
/mirror/api/v1/ and built on the same runtime, events and message shapes as the desktop API: the phone
holds no state of its own. `always` stays a desktop decision; an answer from a phone names the device.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from orkas.adapter.conversations.runtime import ConversationRuntime
from orkas.adapter.settings.mirror_devices import Device, MirrorDevices, PairingRefused, TooManyAttempts
from orkas.adapter.wire import hello as hello_wire
from orkas.core.errors import ConfigError, NotFound
from orkas.engine.memory import MemoryRejected
from orkas.server.answers import answered, config, too_late
from orkas.server.conversation_routes import MAX_PAGE, attached_image, history_payload, receive_upload
from orkas.server.memory_routes import MemoryUndo
from orkas.server.mirror.fanout import Fanout, send_frames
from orkas.server.mirror.security import MirrorGuard
from orkas.server.rewind_routes import add_rewind_routes
from orkas.server.routing import Api, HTTPException, Query, Request, Response, WebSocket
from orkas.server.sockets import forward, until_gone

if TYPE_CHECKING:
    from orkas.phone.client import Target
    from orkas.server.services import Services

log = logging.getLogger(__name__)
V1 = "/mirror/api/v1"
DECISIONS = {"once": "allow_once", "run": "allow_run", "deny": "deny"}
PHONE_FRAME = 0.040  # seconds of events gathered into one message to a phone: 25 frames a second


class Pair(BaseModel):
    code: str = Field(min_length=1, max_length=40)
    device_name: str = Field(default="Phone", max_length=60)


class NewChat(BaseModel):
    title: str = Field(default="", max_length=200)


class Send(BaseModel):
    text: str = Field(min_length=1, max_length=200_000)
    attachments: list[str] = Field(default_factory=list, max_length=20)


class Answer(BaseModel):
    question_id: str
    decision: Literal["once", "run", "deny"]


def device_of(holder: Request | WebSocket) -> Device:
    device = holder.scope.get("state", {}).get("device")
    if not isinstance(device, Device):
        raise HTTPException(status_code=401, detail="this device is not paired")
    return device


def create_mirror_app(
    *,
    runtime: ConversationRuntime,
    services: Services,
    devices: MirrorDevices,
    port: int,
    addresses: set[str],
    phone: Target | None = None,
    uploads: Path | None = None,
) -> MirrorGuard:
    api = Api()
    # Each open socket's "revoked" flag, by device: a revoke sets them and each handler closes its own.
    open_sockets: dict[str, set[asyncio.Event]] = {}
    fanout = Fanout(runtime, PHONE_FRAME)
    loop: asyncio.AbstractEventLoop | None = None

    def close_device(device_id: str) -> None:
        """A revoked device's open sockets close at once (called from whichever thread revoked it)."""
        for revoked in list(open_sockets.get(device_id, ())):
            if loop is not None:
                loop.call_soon_threadsafe(revoked.set)

    devices.on_revoke.append(close_device)
    leaving = False

    def going_away() -> None:
        """The mirror stops (quitting, or turned off): every open socket closes now (1001), not at the end of the
        server's grace period — a socket that only sends never hears the server's own close."""
        nonlocal leaving
        leaving = True
        for events in open_sockets.values():
            for revoked in list(events):
                revoked.set()

    async def hello(socket: WebSocket) -> Device:
        nonlocal loop
        loop = asyncio.get_running_loop()
        device = device_of(socket)
        await socket.accept()
        await socket.send_json(hello_wire())
        return device

    async def stream_until_revoked(socket: WebSocket, device: Device, sending: Coroutine[Any, Any, None]) -> None:
        """Stream (`sending`), closing the socket (4401) the moment its device is revoked."""
        revoked = asyncio.Event()
        open_sockets.setdefault(device.id, set()).add(revoked)
        if leaving:  # a client reconnecting while the mirror stops: closed at once too
            revoked.set()
        streaming = asyncio.ensure_future(sending)
        stop = asyncio.ensure_future(revoked.wait())
        try:
            await asyncio.wait({streaming, stop}, return_when=asyncio.FIRST_COMPLETED)
            if revoked.is_set():
                streaming.cancel()
                if leaving:
                    await socket.close(code=1001, reason="the mirror stopped")
                else:
                    await socket.close(code=4401, reason="this device was revoked")
        finally:
            stop.cancel()
            streaming.cancel()
            open_sockets[device.id].discard(revoked)

    @api.post(f"{V1}/pair")
    async def pair(body: Pair, request: Request) -> dict[str, str]:
        source = request.client.host if request.client is not None else ""
        try:
            device, token = await asyncio.to_thread(devices.pair, body.code, body.device_name, source)
        except TooManyAttempts as e:
            raise HTTPException(status_code=429, detail=str(e)) from None
        except PairingRefused as e:
            raise HTTPException(status_code=401, detail=str(e)) from None
        return {"device_token": token, "device_id": device.id, "name": device.name}

    @api.get(f"{V1}/conversations")
    async def conversations(request: Request) -> list[dict[str, Any]]:
        """Every conversation, with what this phone has not seen yet and who holds a group's floor."""
        device = device_of(request)
        members = services.members

        def groups() -> dict[str, dict[str, Any]]:
            if members is None:
                return {}
            return {c.id: members.members(c.id) for c in runtime.store.recent()}

        held = await asyncio.to_thread(groups)
        chats = runtime.store.recent()
        running = {chat.id for chat in chats if runtime.running(chat.id)}  # a terminal's runs too
        waiting: dict[str, int] = {}
        for question in runtime.waiting_questions([c for c in running if c not in runtime.active]):
            waiting[question["conversation"]] = waiting.get(question["conversation"], 0) + 1
        return [
            {
                **asdict(chat),
                "running": chat.id in running,
                "unread": devices.unread(device.id, chat.id, runtime.streams.finished_turns(chat.id)),
                "floor": held.get(chat.id, {}).get("floor"),
                "members": held.get(chat.id, {}).get("members", []),  # whom `@` can address
                "waiting": waiting.get(chat.id, 0),  # approvals no one has given yet
            }
            for chat in chats
        ]

    @api.get(f"{V1}/connectors")
    async def connectors_wanting(request: Request) -> dict[str, Any]:
        """The connectors waiting for the person to sign in (first time, or it expired or was revoked): the phone
        says so over its list. Signing in happens on the computer, where the browser comes back to."""
        device_of(request)
        hub = services.connectors
        rows = await hub.status() if hub is not None else []
        wanting = [
            {"name": row["name"], "again": bool(row["signed_in"])}
            for row in rows
            if row["enabled"] and row["oauth"] and (row["status"] == "signin" or not row["signed_in"])
        ]
        return {"signin": wanting}

    @api.post(f"{V1}/conversations", status_code=201)
    async def create(body: NewChat, request: Request) -> dict[str, Any]:
        """A new chat started on the phone, in the default workspace (choosing a folder stays the desktop's)."""
        device_of(request)
        chat = config(lambda: runtime.store.create(title=body.title))
        return {**asdict(chat), "running": False, "unread": 0, "floor": None, "members": [], "waiting": 0}

    @api.get(f"{V1}/conversations/{{conversation_id}}/messages")
    async def messages(
        conversation_id: str,
        request: Request,
        after: int = Query(default=-1),
        limit: int | None = Query(default=None, ge=1, le=MAX_PAGE),
        before: str = "",
    ) -> dict[str, Any]:
        """The history (its newest `limit` messages, or the page before message `before`), the title, and with
        `after` the events since."""
        device = device_of(request)
        if before:
            with answered():
                return await history_payload(runtime, services, conversation_id, limit, before)
        with answered():
            payload = await history_payload(runtime, services, conversation_id, limit)
            # Read after the history: a title given since comes as an event after `after`, so none is missed.
            payload["title"] = config(lambda: runtime.store.get(conversation_id)).title
        if after >= 0:  # the events since then too, so a phone that slept catches up in one call
            backlog, queue = runtime.subscribe(conversation_id, after)
            runtime.unsubscribe(conversation_id, queue)
            payload["events"] = backlog
        devices.mark_read(device.id, conversation_id, runtime.streams.finished_turns(conversation_id))
        return payload

    @api.websocket(f"{V1}/events")
    async def events(socket: WebSocket, conversation: str = "", after: int = 0) -> None:
        device = await hello(socket)
        try:
            runtime.store.get(conversation)
        except (NotFound, ConfigError) as e:
            await socket.close(code=4404, reason=str(e)[:120])
            return
        backlog, outbox = fanout.join(conversation, after)
        try:
            await stream_until_revoked(socket, device, until_gone(socket, send_frames(socket, backlog, outbox, after)))
        finally:
            fanout.leave(conversation, outbox)

    @api.websocket(f"{V1}/alerts")
    async def alerts(socket: WebSocket) -> None:
        """Every conversation's alerts (an approval waiting or given, a turn finished or failed), for the
        phone's notifications: the questions waiting now first, then each as it happens."""
        device = await hello(socket)
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        runtime.alerts.add(queue)
        try:
            await stream_until_revoked(socket, device, forward(socket, runtime.waiting_questions(), queue))
        finally:
            runtime.alerts.discard(queue)

    @api.post(f"{V1}/conversations/{{conversation_id}}/messages", status_code=202)
    async def send(conversation_id: str, body: Send, request: Request) -> dict[str, Any]:
        device_of(request)
        files = config(lambda: services.attachments.get(conversation_id, body.attachments)) if body.attachments else []
        return config(lambda: runtime.send(conversation_id, body.text, files))

    @api.post(f"{V1}/conversations/{{conversation_id}}/messages/{{message_id}}/regenerate", status_code=202)
    async def regenerate(conversation_id: str, message_id: str, request: Request) -> dict[str, Any]:
        """Retry after an error (or another answer): the desktop's own, the failed try kept as a version."""
        device_of(request)
        with answered():
            return await runtime.regenerate(conversation_id, message_id)

    add_rewind_routes(api, runtime, V1, device_of)  # the phone offers rewind with the same preview

    @api.post(f"{V1}/conversations/{{conversation_id}}/stop")
    async def stop(conversation_id: str, request: Request) -> dict[str, bool]:
        device_of(request)
        return {"stopped": config(lambda: runtime.stop(conversation_id))}

    @api.post(f"{V1}/conversations/{{conversation_id}}/answers")
    async def answer(conversation_id: str, body: Answer, request: Request) -> Any:
        device = device_of(request)
        decision = DECISIONS[body.decision]
        if not config(lambda: runtime.answer(conversation_id, body.question_id, decision, by=device.name)):  # type: ignore[arg-type]
            return too_late(runtime.answer_given(conversation_id, body.question_id))
        return {"answered": True}

    @api.post(f"{V1}/memory/undo")
    async def memory_undo(body: MemoryUndo) -> dict[str, bool]:
        """The phone's Undo beside "Remembered: …": the same as the desktop's."""
        if services.memory is None:
            raise HTTPException(status_code=404, detail="memory is not available here")
        memory = services.memory
        try:
            await asyncio.to_thread(lambda: memory.undo(body.target, body.entry, body.replaced, removed=body.removed))
        except MemoryRejected as e:
            raise HTTPException(status_code=400, detail=str(e)) from None
        return {"undone": True}

    @api.post(f"{V1}/conversations/{{conversation_id}}/attachments", status_code=201)
    async def upload(
        conversation_id: str, request: Request, name: str = Query(min_length=1, max_length=255)
    ) -> dict[str, Any]:
        device_of(request)
        return await receive_upload(runtime, services, conversation_id, request, name)

    @api.get(f"{V1}/conversations/{{conversation_id}}/attachments/{{attachment_id}}")
    async def image(conversation_id: str, attachment_id: str, request: Request) -> Response:
        """An attached image, for the thumbnail in the phone's transcript."""
        device_of(request)
        return await attached_image(runtime, services, conversation_id, attachment_id)

    if (
        phone is not None and uploads is not None
    ):  # the phone view: Flet's web client, its session socket, its photo uploads
        from orkas.phone.app import PhoneApp  # Flet loads when a phone view is served, not with the app

        view = PhoneApp(phone, uploads)
        api.add_route("/m/upload", view.receive, methods=["PUT"])
        api.mount("/m", view.asgi)
    guard = MirrorGuard(api, devices=devices, port=port, addresses=addresses)
    guard.going_away = going_away
    return guard

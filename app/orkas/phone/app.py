"""The phone view as an ASGI app, mounted by the mirror at /m/ (Flet's web client, served offline).

Flet's static files carry no data and need no token: the view asks for pairing itself. What comes back
is tightened here: Flet's `Access-Control-Allow-Origin: *` is dropped (the mirror has no CORS), and a
Content-Security-Policy keeps the page from loading anything from outside this computer — Flutter's
web engine otherwise reaches for a CDN (Rive's runtime), which would tell the network the phone is
using it.

A page that comes back with a session this process does not hold (Orkas restarted; the phone slept past
SESSION_KEPT) is told so and reloads fresh (orkas.js): Flet would otherwise start a new session under the
page's old tree, whose calls to the phone (its stored token, its language) are never answered — a blank
view that a reload, rejoining that same session, could not mend.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import shutil
from pathlib import Path
from typing import Any

import flet_web.fastapi as flet_fastapi
import msgpack
from flet.controls.types import RouteUrlStrategy, WebRenderer
from flet.messaging.protocol import MessageAction
from flet_web.fastapi.flet_app_manager import app_manager
from flet_web.fastapi.flet_upload import FletUpload
from starlette.requests import Request
from starlette.responses import Response

from orkas.phone.client import Target
from orkas.phone.offline import NoCdn
from orkas.phone.page_words import PageWords
from orkas.phone.view import make_main

ASSETS = Path(__file__).parent / "assets"
UPLOAD_PATH = "m/upload"  # relative to the mirror's root: the signature covers it
MAX_PHOTO = 50 * 1024 * 1024  # the desktop's attachment limit
SESSION_KEPT = 600  # seconds a phone's session waits for it after the socket drops (sleep, Wi-Fi change)
CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval' blob:",  # an inline bootstrap; CanvasKit is wasm
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "frame-ancestors 'none'",
    ]
)
DROPPED = {b"access-control-allow-origin"}
STALE = 4001  # the socket's close code for "no such session here": orkas.js forgets it and reloads

for name in ("flet", "flet_web", "flet_transport", "flet_controls", "flet_components", "flet_object_patch"):
    logging.getLogger(name).setLevel(logging.WARNING)  # its info lines name sessions and routes (a code)


class PhoneApp:
    """Flet's web app for the phone view, with this product's headers (`asgi`, mounted at /m), and the
    endpoint its file picker uploads to (`receive`, routed at /m/upload by the mirror): a photo goes up
    over HTTP, streamed to `uploads`, never through the session's socket (capped at 1 MB), and the
    view passes it on to the conversation through the API, as any phone would."""

    def __init__(self, target: Target, uploads: Path) -> None:
        secret = secrets.token_urlsafe(32)  # signs upload URLs: only a session can hand one out
        uploads.mkdir(parents=True, exist_ok=True)
        for left in uploads.iterdir():  # a previous run's unfinished uploads
            shutil.rmtree(left, ignore_errors=True) if left.is_dir() else left.unlink(missing_ok=True)
        self.asgi = _Headers(
            PageWords(
                NoCdn(
                    _ForgetStale(
                        flet_fastapi.app(
                            make_main(target, uploads),
                            no_cdn=True,
                            # One renderer in every browser, in its full build (offline.py): the Linux bundle
                            # ships only it (build/orkas.spec).
                            # CanvasKit is the one Safari and Firefox run anyway, and Flet's own advice for its
                            # apps: faster than skwasm at passing the byte buffers of every UI update to Dart.
                            web_renderer=WebRenderer.CANVAS_KIT,
                            # The route after a "#": a reload keeps it (at a path, Flet's client reported "/" and the
                            # open chat gave way to the list), and the server is asked for /m/ alone.
                            route_url_strategy=RouteUrlStrategy.HASH,
                            assets_dir=str(ASSETS),
                            app_name="Orkas",
                            app_short_name="Orkas",
                            app_description="Watch and steer the agents on your computer",
                            session_timeout_seconds=SESSION_KEPT,
                            upload_endpoint_path=UPLOAD_PATH,
                            secret_key=secret,
                        )
                    )
                )
            )
        )
        self._upload = FletUpload(upload_dir=str(uploads), max_upload_size=MAX_PHOTO, secret_key=secret)

    async def receive(self, request: Request) -> Response:
        await self._upload.handle(request)
        return Response(status_code=200)


async def start() -> None:
    """Flet's housekeeping (expired sessions are closed): once, on the loop the mirror serves on."""
    await app_manager.start()


async def stop() -> None:
    """Every phone's session closed (its watchers stopped, its client closed: the view's `close`), before the
    mirror stops: otherwise the sessions' own requests to the mirror held its shutdown past its grace period.
    Idempotent; Flet's housekeeping goes on (the mirror may be turned on again), and ends with the loop."""
    for key in list(_sessions() or {}):
        await app_manager.delete_session(key)


# Each open view's connection, told when the mirror stops (quitting, or turned off in Settings): it ends at once.
# One event per connection, made on the loop that serves it (a module-wide one is bound to the first loop to wait).
_open: set[asyncio.Event] = set()
_stopping = False


def let_go() -> None:
    """The mirror is stopping: each phone view's connection ends (its session is kept when only turned off)."""
    global _stopping
    _stopping = True
    for closing in _open:
        closing.set()


def welcome() -> None:
    """The mirror serves again: connections are let in and kept."""
    global _stopping
    _stopping = False


def _sessions() -> dict[str, Any] | None:
    """Flet's sessions, keyed "<page>_<session id>_<client hash>"; None if a Flet keeps them elsewhere."""
    held = getattr(app_manager, "_FletAppManager__sessions", None)
    return held if isinstance(held, dict) else None


class _Headers:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in DROPPED]
                headers += [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _ForgetStale:
    """Closes a view's socket with STALE when it registers a session this process does not hold, before Flet
    makes a session for it (see the module's docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        registering = True
        ended = asyncio.Event()  # closed as stale, or the mirror is stopping
        closing = asyncio.Event()
        if _stopping:
            closing.set()
        _open.add(closing)

        async def checked() -> Any:
            nonlocal registering
            message = await _unless(closing, receive)
            if message is None:  # the mirror stops: the view is told, and Flet that it left (it keeps the session)
                with contextlib.suppress(Exception):  # already closed by the other side
                    await send({"type": "websocket.close", "code": 1001, "reason": "the mirror stopped"})
                message = {"type": "websocket.disconnect", "code": 1001}
            if message["type"] == "websocket.disconnect":  # gone: whatever Flet does next, the handler ends
                ended.set()
                return message
            if registering and message["type"] == "websocket.receive":
                registering = False  # the client's first frame registers it; later ones are Flet's alone
                if _unknown_session(message.get("bytes")):
                    await send({"type": "websocket.close", "code": STALE, "reason": "no such session"})
                    ended.set()
                    return {"type": "websocket.disconnect", "code": STALE}
            return message

        # Flet ends a connection on a disconnect only once a session is registered: one closed before (as stale) waited
        # on its send queue for ever, and held the mirror's shutdown past its grace period (a traceback on quitting,
        # after Orkas had restarted under an open phone). Such a handler is ended here, quietly.
        handler = asyncio.ensure_future(self.app(scope, checked, send))
        told = asyncio.ensure_future(ended.wait())
        try:
            await asyncio.wait({handler, told}, return_when=asyncio.FIRST_COMPLETED)
            if not handler.done():
                await asyncio.wait({handler}, timeout=1.0)  # a registered session ends itself on the disconnect
        finally:
            _open.discard(closing)
            told.cancel()
            if not handler.done():
                handler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await handler


async def _unless(stopping: asyncio.Event, receive: Any) -> Any:
    """The next ASGI message, or None once the mirror is stopping."""
    if stopping.is_set():
        return None
    got = asyncio.ensure_future(receive())
    closing = asyncio.ensure_future(stopping.wait())
    await asyncio.wait({got, closing}, return_when=asyncio.FIRST_COMPLETED)
    closing.cancel()
    if got.done():
        return got.result()
    got.cancel()
    return None


def _unknown_session(frame: bytes | None) -> bool:
    """A register frame (`[0x00][msgpack [REGISTER_CLIENT, body]]`) naming a session Flet does not hold."""
    if not frame or frame[0] != 0:
        return False
    try:
        action, body = msgpack.unpackb(frame[1:])
    except (ValueError, TypeError, msgpack.UnpackException):
        return False
    if action != MessageAction.REGISTER_CLIENT.value or not isinstance(body, dict):
        return False
    session_id = body.get("session_id")
    held = _sessions()
    if not session_id or held is None:
        return False  # a new page; or a Flet that keeps sessions elsewhere: never refuse then
    return not any(f"_{session_id}_" in key for key in held)

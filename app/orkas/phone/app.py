"""The phone view as an ASGI app, mounted by the mirror at /m/ (Flet's web client, served offline).

Flet's static files carry no data and need no token: the view asks for pairing itself. What comes back
is tightened here: Flet's `Access-Control-Allow-Origin: *` is dropped (the mirror has no CORS), and a
Content-Security-Policy keeps the page from loading anything from outside this computer — Flutter's
web engine otherwise reaches for a CDN (Rive's runtime), which would tell the network the phone is
using it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import flet_web.fastapi as flet_fastapi
from flet_web.fastapi.flet_app_manager import app_manager

from orkas.phone.client import Target
from orkas.phone.view import make_main

ASSETS = Path(__file__).parent / "assets"
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

for name in ("flet", "flet_web", "flet_transport", "flet_controls", "flet_components", "flet_object_patch"):
    logging.getLogger(name).setLevel(logging.WARNING)  # its info lines name sessions and routes (a code)


def phone_app(target: Target) -> Any:
    """Flet's web app for the phone view, with this product's headers."""
    inner = flet_fastapi.app(
        make_main(target),
        no_cdn=True,
        assets_dir=str(ASSETS),
        app_name="Orkas",
        app_short_name="Orkas",
        app_description="Watch and steer the agents on your computer",
        session_timeout_seconds=SESSION_KEPT,
    )
    return _Headers(inner)


async def start() -> None:
    """Flet's housekeeping (expired sessions are closed): once, on the loop the mirror serves on."""
    await app_manager.start()


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

"""The phone mirror's guard: the same body caps as the desktop API (security.py), different doors.

- every route under /mirror/api/v1/ needs a paired device's token (`Authorization: Bearer …`, or
  `?token=` on the WebSocket, which a browser cannot give headers) — except `pair`, which takes the
  one-time code instead; a revoked token is refused at once;
- Host must be one of this machine's own addresses (LAN, VPN, loopback) on the mirror's port: a name
  that resolves to us (DNS rebinding) is not enough;
- an Origin, when sent, must be the mirror itself; no CORS, preflights refused; changes are JSON (a
  photo upload is raw bytes);
- nothing of the desktop's own API is here: /api/… does not exist on this port.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from urllib.parse import parse_qs

from orkas.adapter.settings.mirror_devices import MirrorDevices
from orkas.server.security import ASGIApp, LocalOnly, Scope

PREFIX = "/mirror/api/v1/"
PUBLIC = ("/mirror/api/v1/pair", "/m/", "/m")  # pairing takes a code; the phone view asks for pairing itself
PHONE_SOCKET = "/m/ws"  # the phone view's Flet session
SESSIONS_PER_MINUTE = 30  # a phone opens one per page load; a reconnecting one, a few
PHONE_UPLOAD = "/m/upload"  # the phone view's file picker puts a photo here, with a URL its session signed
MIRROR_UPLOAD = re.compile(r"^(/mirror/api/v1/conversations/[^/]+/attachments|/m/upload)$")


class MirrorGuard(LocalOnly):
    upload = MIRROR_UPLOAD
    foreign_host = "this mirror answers only on this computer's own addresses"

    def __init__(self, app: ASGIApp, *, devices: MirrorDevices, port: int, addresses: set[str]) -> None:
        super().__init__(app, token="", port=port)
        self.devices = devices
        self.addresses = addresses
        self.hosts = {_host(a, port) for a in addresses}
        self.origins = {f"https://{h}" for h in self.hosts}
        self.sessions: dict[str, list[float]] = {}  # phone-view sockets opened, by client address
        self.going_away: Callable[[], None] = lambda: None  # the app's: its open sockets close as the mirror stops

    def _admit(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | bool:
        """The mirror's own doors: only its paths; pairing and the phone view open; the rest for a paired
        device, which the routes then find in the request's state."""
        path = scope.get("path", "")
        if not path.startswith(PREFIX) and not path.startswith("/m"):
            return 404, "not found"
        if path == PHONE_UPLOAD:
            return False  # its own check: a signature only a paired phone's session can make (phone/app.py)
        if path == PHONE_SOCKET and scope["type"] == "websocket" and not self._session_allowed(scope):
            return 429, "too many phone sessions from this address: wait a minute"
        if path in PUBLIC or path.startswith("/m/"):
            return True  # no device yet, but a change is still JSON
        token = headers.get("authorization", "")
        token = token[7:] if token.startswith("Bearer ") else ""
        if not token and scope["type"] == "websocket":
            token = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token") or [""])[0]
        device = self.devices.authenticate(token)
        if device is None:
            return 401, "this device is not paired (or was revoked): pair it again from the computer"
        scope.setdefault("state", {})["device"] = device
        return True

    def _session_allowed(self, scope: Scope) -> bool:
        """The phone view's socket is open before pairing (the view asks for the code itself) and each
        one is a session kept for minutes: an address may open only so many a minute."""
        client = (scope.get("client") or ("?", 0))[0]
        now = time.monotonic()
        recent = [t for t in self.sessions.get(client, []) if now - t < 60]
        if len(recent) >= SESSIONS_PER_MINUTE:
            self.sessions[client] = recent
            return False
        self.sessions[client] = [*recent, now]
        return True


def _host(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"

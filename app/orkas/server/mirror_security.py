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
from urllib.parse import parse_qs

from orkas.adapter.mirror_devices import MirrorDevices
from orkas.server.security import MUTATING, ASGIApp, LocalOnly, Scope

PREFIX = "/mirror/api/v1/"
PUBLIC = ("/mirror/api/v1/pair", "/m/", "/m")  # pairing takes a code; the phone view asks for pairing itself
MIRROR_UPLOAD = re.compile(r"^/mirror/api/v1/conversations/[^/]+/attachments$")


class MirrorGuard(LocalOnly):
    upload = MIRROR_UPLOAD

    def __init__(self, app: ASGIApp, *, devices: MirrorDevices, port: int, addresses: set[str]) -> None:
        super().__init__(app, token="", port=port)
        self.devices = devices
        self.addresses = addresses
        self.hosts = {_host(a, port) for a in addresses}
        self.origins = {f"https://{h}" for h in self.hosts}

    def _problem(self, scope: Scope) -> tuple[int, str] | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if headers.get("host", "") not in self.hosts:
            return 403, "this mirror answers only on this computer's own addresses"
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return 403, "requests from other origins are not allowed"
        method = scope.get("method", "GET")
        if method == "OPTIONS":
            return 403, "cross-origin requests are not allowed"
        path = scope.get("path", "")
        if not path.startswith(PREFIX) and not path.startswith("/m"):
            return 404, "not found"
        kind = headers.get("content-type", "").split(";")[0].strip()
        if method in MUTATING and MIRROR_UPLOAD.match(path):
            if kind != "application/octet-stream":
                return 415, "send the file's bytes (Content-Type: application/octet-stream)"
        elif method in MUTATING and kind != "application/json":
            return 415, "send JSON (Content-Type: application/json)"
        if path in PUBLIC or path.startswith("/m/"):
            return None
        token = headers.get("authorization", "")
        token = token[7:] if token.startswith("Bearer ") else ""
        if not token and scope["type"] == "websocket":
            token = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token") or [""])[0]
        device = self.devices.authenticate(token)
        if device is None:
            return 401, "this device is not paired (or was revoked): pair it again from the computer"
        scope.setdefault("state", {})["device"] = device
        return None


def _host(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"

"""The local API is not an open door: an ASGI guard in front of every route.

- a per-launch secret token (compared in constant time, never logged) on every /api request and
  WebSocket; the page itself gets it once, in the URL the app opens;
- Host must be 127.0.0.1 or localhost on our port (DNS rebinding cannot reach us);
- an Origin, when sent, must be our own;
- changing requests must be JSON (a text/plain POST — what a foreign page can send without a
  preflight — gets 415);
- no CORS headers, ever; preflights are refused.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PUBLIC_PREFIXES = ("/static/", "/favicon.ico")  # the UI's own code (and "/", its page): no data, no token


class LocalOnly:
    def __init__(self, app: ASGIApp, *, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.port = port
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://127.0.0.1:{port}", f"http://localhost:{port}"}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        problem = self._problem(scope)
        if problem is None:
            await self.app(scope, receive, send)
            return
        status, reason = problem
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4000 + status, "reason": reason})
            return
        body = json.dumps({"error": reason}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _problem(self, scope: Scope) -> tuple[int, str] | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if headers.get("host", "") not in self.hosts:
            return 403, "this server only answers on 127.0.0.1 and localhost"
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return 403, "requests from other origins are not allowed"
        method = scope.get("method", "GET")
        if method == "OPTIONS":
            return 403, "cross-origin requests are not allowed"
        path = scope.get("path", "")
        if path == "/" or path.startswith(PUBLIC_PREFIXES):
            return None
        if not self._has_token(scope, headers):
            return 401, "a valid token is needed (open the URL the app printed)"
        if method in MUTATING and headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return 415, "send JSON (Content-Type: application/json)"
        return None

    def _has_token(self, scope: Scope, headers: dict[str, str]) -> bool:
        offered = headers.get("x-orkas-token") or ""
        if not offered and headers.get("authorization", "").startswith("Bearer "):
            offered = headers["authorization"][7:]
        if not offered:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            offered = (query.get("token") or [""])[0]
        return bool(offered) and hmac.compare_digest(offered.encode(), self.token.encode())

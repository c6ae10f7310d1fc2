"""The local API is not an open door: an ASGI guard in front of every route.

- a per-launch secret token (compared in constant time, never logged) on every /api request and
  WebSocket — in a header, and in the query string only for a WebSocket (a browser cannot give one a
  header; a URL with a token in it ends up in logs and history); the page itself gets it once, in the URL
  the app opens, and takes it out of the address bar;
- Host must be 127.0.0.1 or localhost on our port (DNS rebinding cannot reach us);
- an Origin, when sent, must be our own;
- changing requests must be JSON (a text/plain POST — what a foreign page can send without a
  preflight — gets 415); the one exception is a file upload, sent as application/octet-stream, which
  a foreign page cannot send without a preflight either;
- request bodies are capped while they are read (1 MB; uploads 50 MB, streamed to disk by their
  route), so no request can make the server hold hundreds of megabytes, and a body that stalls for
  BODY_IDLE is dropped (slow heads and too many connections are `connections.GuardedH11`'s job);
- no CORS headers, ever; preflights are refused.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
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
MAX_BODY = 1024 * 1024
MAX_UPLOAD = 50 * 1024 * 1024
UPLOAD = re.compile(r"^/api/conversations/[^/]+/attachments$")
BODY_IDLE = 30.0  # seconds a body may go without a byte before the request is dropped


def _patient(receive: Receive) -> Receive:
    """`receive`, but a body that stalls for BODY_IDLE reads as the client having gone away: the route
    streaming it aborts and cleans up instead of holding its half-written file and socket forever."""

    async def receive_or_give_up() -> Message:
        try:
            return await asyncio.wait_for(receive(), BODY_IDLE)
        except TimeoutError:
            return {"type": "http.disconnect"}

    return receive_or_give_up


class LocalOnly:
    upload = UPLOAD  # the one route whose body is raw bytes, streamed (the mirror has its own)
    foreign_host = "this server only answers on 127.0.0.1 and localhost"

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
            if scope["type"] == "http" and scope.get("method") in MUTATING:
                await self._capped(scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        await self._refuse(scope, send, *problem)

    async def _capped(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A changing request's body, capped: an upload streams to its route (which counts it); any other
        body is read here — at most MAX_BODY — before the route runs, and replayed to it."""
        upload = bool(self.upload.match(scope.get("path", "")))
        limit = MAX_UPLOAD if upload else MAX_BODY
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await self._refuse(scope, send, 413, f"the request is larger than {limit // (1024 * 1024)} MB")
            return
        if upload:
            await self.app(scope, _patient(receive), send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), BODY_IDLE)
            except TimeoutError:
                await self._refuse(scope, send, 408, f"the request's body stalled for {BODY_IDLE:.0f} seconds")
                return
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                await self._refuse(scope, send, 413, f"the request is larger than {limit // (1024 * 1024)} MB")
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, send: Send, status: int, reason: str) -> None:
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
            return 403, self.foreign_host
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return 403, "requests from other origins are not allowed"
        method = scope.get("method", "GET")
        if method == "OPTIONS":
            return 403, "cross-origin requests are not allowed"
        admitted = self._admit(scope, headers)
        if admitted is not True:
            return admitted or None  # a refusal, or a public path whose body is not checked
        path = scope.get("path", "")
        kind = headers.get("content-type", "").split(";")[0].strip().lower()  # media types ignore case
        bodiless = headers.get("content-length", "0") == "0" and "transfer-encoding" not in headers
        if method in MUTATING and bodiless and not self.upload.match(path):
            return None  # a DELETE or a POST with nothing in it has no body to be of a type
        if method in MUTATING and self.upload.match(path):
            if kind != "application/octet-stream":
                return 415, "send the file's bytes (Content-Type: application/octet-stream)"
        elif method in MUTATING and kind != "application/json":
            return 415, "send JSON (Content-Type: application/json)"
        return None

    def _admit(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | bool:
        """Who may come in, past the checks every request passes: a refusal, False for a public path
        (the page and its files), True for a request the token admits (its body's type checked next)."""
        path = scope.get("path", "")
        if path == "/" or path.startswith(PUBLIC_PREFIXES):
            return False
        if not self._has_token(scope, headers):
            return 401, "a valid token is needed (open the URL the app printed)"
        return True

    def _has_token(self, scope: Scope, headers: dict[str, str]) -> bool:
        offered = headers.get("x-orkas-token") or ""
        if not offered and headers.get("authorization", "").startswith("Bearer "):
            offered = headers["authorization"][7:]
        if not offered and scope.get("type") == "websocket":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            offered = (query.get("token") or [""])[0]
        return bool(offered) and hmac.compare_digest(offered.encode(), self.token.encode())

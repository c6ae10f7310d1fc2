"""What the server logs of each request, and what it keeps when a route crashes.

Outside `LocalOnly`, so refused requests are logged too. A request is logged as its method, its path
without the query (URLs carry the launch token), its status and its time; 5xx as warnings, refusals at
info, the rest at debug. An exception escaping a route becomes a crash report and uvicorn answers 500.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from orkas.core import crashes
from orkas.core.crashes import CrashReports
from orkas.server.security import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("orkas.server.requests")


class Observed:
    def __init__(self, app: ASGIApp, *, crashes: CrashReports | None = None) -> None:
        self.app = app
        self.crashes = crashes  # None: the process's own (cli/__init__.py installs them)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status: dict[str, Any] = {"code": None}

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            elif message["type"] == "websocket.accept":
                status["code"] = 101
            elif message["type"] == "websocket.close" and status["code"] is None:
                status["code"] = 403  # closed before it was accepted: refused
            await send(message)

        try:
            await self.app(scope, receive, noting)
        except Exception as error:
            crashes.report("server", error, self.crashes)
            status["code"] = 500
            raise
        finally:
            _log(scope, status["code"], time.perf_counter() - began)


def _log(scope: Scope, code: int | None, seconds: float) -> None:
    method = scope.get("method", "WS")
    path = scope.get("path", "?")
    if path.startswith("/static/"):
        return  # the UI's own files: hundreds per launch, nothing to learn
    level = logging.DEBUG
    if code is None or code >= 500:
        level = logging.WARNING
    elif code in (400, 401, 403, 413, 415):
        level = logging.INFO
    # A path is the client's words: its control characters (a NUL, a CR that would start a forged log line) written
    # as escapes.
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)
    log.log(level, "%s %s %s in %.0f ms", method, shown, code if code is not None else "-", seconds * 1000)

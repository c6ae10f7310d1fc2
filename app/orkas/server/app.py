"""The API routes. Every route sits behind `LocalOnly` (security.py)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException, WebSocket
from fastapi.responses import HTMLResponse

from orkas import __version__
from orkas.adapter.sessions import SessionStore
from orkas.core.errors import ConfigError
from orkas.engine.codec import encode
from orkas.engine.sandbox.executor import confinement
from orkas.server.security import LocalOnly

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Orkas</title></head>
<body><main id="app">Orkas {version}</main>
<script>sessionStorage.setItem("orkas-token", new URLSearchParams(location.search).get("token"));
history.replaceState(null, "", "/");</script></body></html>"""


def create_app(*, token: str, port: int, sessions: SessionStore, providers: list[str]) -> LocalOnly:
    api = FastAPI(title="Orkas", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)

    @api.get("/", response_class=HTMLResponse)
    async def page() -> str:
        return PAGE.format(version=__version__)

    @api.get("/api/status")
    async def status() -> dict[str, Any]:
        return {"version": __version__, "providers": providers, "sandbox": confinement()}

    @api.post("/api/sessions", status_code=201)
    async def create_session() -> dict[str, str]:
        session = sessions.create()
        return {"id": session.id}

    @api.get("/api/sessions/{session_id}")
    async def read_session(session_id: str) -> dict[str, Any]:
        try:
            session, report = sessions.open(session_id)
        except ConfigError as e:
            raise HTTPException(status_code=404, detail=str(e)) from None
        session.close()
        return {"id": session_id, "messages": [encode(m) for m in session.messages()], "repaired": report.changed}

    @api.websocket("/api/events")
    async def events(socket: WebSocket) -> None:
        await socket.accept()
        await socket.send_json({"type": "hello", "version": __version__})
        await socket.close()

    return LocalOnly(api, token=token, port=port)

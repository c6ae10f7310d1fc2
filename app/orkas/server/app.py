"""The API routes. Every route sits behind `LocalOnly` (security.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal, TypeVar

from fastapi import FastAPI, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from orkas import __version__
from orkas.adapter.runtime import ConversationRuntime
from orkas.core.errors import ConfigError
from orkas.engine.codec import encode
from orkas.engine.sandbox.executor import confinement
from orkas.server.security import LocalOnly

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Orkas</title></head>
<body><main id="app">Orkas {version}</main>
<script>sessionStorage.setItem("orkas-token", new URLSearchParams(location.search).get("token"));
history.replaceState(null, "", "/");</script></body></html>"""


class NewConversation(BaseModel):
    title: str = Field(default="", max_length=200)
    workspace: str | None = None


class Rename(BaseModel):
    title: str = Field(min_length=1, max_length=200)


T = TypeVar("T")


def _config(action: Callable[[], T]) -> T:
    """Run a store action, turning a configuration mistake into a 404/400 with its message."""
    try:
        return action()
    except ConfigError as e:
        status = 404 if str(e).startswith("no conversation") else 400
        raise HTTPException(status_code=status, detail=str(e)) from None


class Send(BaseModel):
    text: str = Field(min_length=1, max_length=200_000)


class Answer(BaseModel):
    question_id: str
    decision: Literal["allow_once", "allow_run", "always", "deny"]


def create_app(*, token: str, port: int, runtime: ConversationRuntime, providers: list[str]) -> LocalOnly:
    conversations = runtime.store
    api = FastAPI(title="Orkas", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)

    @api.get("/", response_class=HTMLResponse)
    async def page() -> str:
        return PAGE.format(version=__version__)

    @api.get("/api/status")
    async def status() -> dict[str, Any]:
        return {"version": __version__, "providers": providers, "sandbox": confinement()}

    @api.get("/api/conversations")
    async def conversations_list() -> list[dict[str, Any]]:
        return [asdict(c) for c in conversations.recent()]

    @api.post("/api/conversations", status_code=201)
    async def conversations_create(body: NewConversation) -> dict[str, Any]:
        workspace = Path(body.workspace).expanduser() if body.workspace else None
        return asdict(_config(lambda: conversations.create(title=body.title, workspace=workspace)))

    @api.patch("/api/conversations/{conversation_id}")
    async def conversations_rename(conversation_id: str, body: Rename) -> dict[str, Any]:
        return asdict(_config(lambda: conversations.rename(conversation_id, body.title)))

    @api.delete("/api/conversations/{conversation_id}", status_code=204)
    async def conversations_delete(conversation_id: str) -> None:
        _config(lambda: conversations.delete(conversation_id))

    @api.get("/api/conversations/{conversation_id}/messages")
    async def conversations_messages(conversation_id: str) -> dict[str, Any]:
        session, report = _config(lambda: conversations.session(conversation_id))
        session.close()
        messages = [encode(m) for m in session.messages()]
        return {"id": conversation_id, "messages": messages, "repaired": bool(report and report.changed)}

    @api.get("/api/search")
    async def search(q: str) -> list[dict[str, Any]]:
        return [{"conversation": asdict(h.conversation), "snippet": h.snippet} for h in conversations.search(q)]

    @api.post("/api/conversations/{conversation_id}/messages", status_code=202)
    async def conversations_send(conversation_id: str, body: Send) -> dict[str, Any]:
        return _config(lambda: runtime.send(conversation_id, body.text))

    @api.post("/api/conversations/{conversation_id}/stop")
    async def conversations_stop(conversation_id: str) -> dict[str, bool]:
        return {"stopped": runtime.stop(conversation_id)}

    @api.post("/api/conversations/{conversation_id}/answers")
    async def conversations_answer(conversation_id: str, body: Answer) -> dict[str, bool]:
        answered = runtime.answer(conversation_id, body.question_id, body.decision)
        if not answered:
            raise HTTPException(status_code=404, detail="no open question with that id")
        return {"answered": True}

    @api.websocket("/api/events")
    async def events(socket: WebSocket, conversation: str = "", after: int = 0) -> None:
        await socket.accept()
        await socket.send_json({"type": "hello", "version": __version__})
        if not conversation:
            await socket.close()
            return
        backlog, queue = runtime.subscribe(conversation, after)
        try:
            for event in backlog:
                await socket.send_json(event)
            while True:
                await socket.send_json(await queue.get())
        except WebSocketDisconnect:
            pass
        finally:
            runtime.unsubscribe(conversation, queue)

    return LocalOnly(api, token=token, port=port)

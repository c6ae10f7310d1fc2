"""The routes for what the agent remembers: cross-session memory (`/api/memory`) and the knowledge
base (`/api/kb`, with its progress socket)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field
from starlette.responses import JSONResponse, PlainTextResponse, Response

from orkas.adapter.knowledge.progress import KbProgress, KbStatus
from orkas.adapter.knowledge.service import KnowledgeService
from orkas.engine.memory import Memory, MemoryRejected, MemoryStore
from orkas.engine.memory.terms import highlights
from orkas.server.routing import Api, HTTPException, WebSocket
from orkas.server.sockets import forward

T = TypeVar("T")


class MemoryText(BaseModel):
    text: str = Field(max_length=2000)


class MemoryEdit(BaseModel):
    old: str = Field(min_length=1, max_length=2000)
    text: str = Field(default="", max_length=2000)


class MemoryUndo(BaseModel):
    target: Literal["profile", "notes"]
    entry: str = Field(min_length=1, max_length=2000)
    replaced: str | None = Field(default=None, max_length=2000)
    removed: bool = False  # the change was a removal: Undo keeps the entry again


class KbText(BaseModel):
    title: str = Field(min_length=1, max_length=200)
    text: str = Field(min_length=1, max_length=5_000_000)


class KbPath(BaseModel):
    path: str = Field(min_length=1, max_length=4096)
    watch: bool = False


class KbDoc(BaseModel):
    doc_id: str = Field(min_length=1, max_length=4096)


def add_memory_routes(api: Api, memory: Memory) -> None:
    """Cross-session memory as the person sees it: view, add, edit, delete, export. Their writes pass
    the same injection guard as the agent's."""

    def store(target: str) -> MemoryStore:
        try:
            return memory.store(target)
        except MemoryRejected as e:
            raise HTTPException(status_code=404, detail=str(e)) from None

    def guarded(action: Callable[[], T]) -> T:
        try:
            return action()
        except MemoryRejected as e:
            raise HTTPException(status_code=400, detail=str(e)) from None

    def view() -> dict[str, Any]:
        return {
            target: {
                "title": s.title,
                "entries": s.entries(),
                "size": s.size(),
                "max_chars": s.max_chars,
                "max_entries": s.max_entries,
            }
            for target, s in (("profile", memory.profile), ("notes", memory.notes))
        }

    @api.get("/api/memory")
    async def memory_get() -> dict[str, Any]:
        return view()

    @api.post("/api/memory/undo")
    async def memory_undo(body: MemoryUndo) -> dict[str, Any]:
        """The Undo beside a "Remembered: …" line in the chat: that write is taken back."""
        await asyncio.to_thread(
            guarded, lambda: memory.undo(body.target, body.entry, body.replaced, removed=body.removed)
        )
        return {"memory": view()}

    # (declared before /api/memory/{target}, which would take "undo" for a target)

    @api.post("/api/memory/{target}")
    async def memory_add(target: str, body: MemoryText) -> dict[str, Any]:
        # the guard's meaning model runs here (and loads on first use): off the event loop
        change = await asyncio.to_thread(guarded, lambda: store(target).add(body.text))
        return {"change": change.describe(), "evicted": change.evicted, "memory": view()}

    @api.post("/api/memory/{target}/replace")
    async def memory_replace(target: str, body: MemoryEdit) -> dict[str, Any]:
        change = await asyncio.to_thread(guarded, lambda: store(target).replace(body.old, body.text))
        return {"change": change.describe(), "evicted": change.evicted, "memory": view()}

    @api.post("/api/memory/{target}/remove")
    async def memory_remove(target: str, body: MemoryEdit) -> dict[str, Any]:
        guarded(lambda: store(target).remove(body.old))
        return {"memory": view()}

    @api.get("/api/memory/export", response_class=PlainTextResponse)
    async def memory_export() -> PlainTextResponse:
        text = memory.profile.markdown() + "\n" + memory.notes.markdown()
        headers = {"Content-Disposition": 'attachment; filename="orkas-memory.md"'}
        return PlainTextResponse(text, media_type="text/markdown; charset=utf-8", headers=headers)


def add_knowledge_routes(api: Api, knowledge: KnowledgeService) -> None:
    """The knowledge base as the person manages it: list, add text / files / folders (watched or not),
    remove, search, export a document's text. `pending` drives the UI's progress bar."""

    @api.get("/api/kb")
    async def kb_status() -> dict[str, Any]:
        return await asyncio.to_thread(knowledge.status)

    @api.post("/api/kb/text", status_code=201)
    async def kb_add_text(body: KbText) -> dict[str, Any]:
        doc_id = f"note/{body.title.strip()}"
        count = await asyncio.to_thread(knowledge.add_text, doc_id, body.text, body.title.strip())
        return {"doc_id": doc_id, "chunks": count}

    @api.post("/api/kb/paths", status_code=201)
    async def kb_add_path(body: KbPath) -> Any:
        try:  # the one path policy decides what may be a source
            resolved = knowledge.source(Path(body.path).expanduser()).workspace
        except ValueError as e:
            raise HTTPException(status_code=400, detail=str(e)) from None
        if resolved.is_dir():  # a folder may take minutes: indexed in the background, progress on /api/kb/events
            knowledge.add_path_later(resolved, watch=body.watch)
            return JSONResponse({"indexing": str(resolved)}, status_code=202)
        try:
            return await asyncio.to_thread(knowledge.add_path, resolved, watch=body.watch)
        except (OSError, ValueError) as e:
            raise HTTPException(status_code=400, detail=str(e)) from None

    @api.post("/api/kb/unwatch")
    async def kb_unwatch(body: KbPath) -> dict[str, bool]:
        """Stop following a watched folder; what was indexed from it stays."""
        if not await asyncio.to_thread(knowledge.unwatch, body.path):
            raise HTTPException(status_code=404, detail=f"{body.path} is not watched")
        return {"unwatched": True}

    @api.post("/api/kb/remove")
    async def kb_remove(body: KbDoc) -> dict[str, bool]:
        if not await asyncio.to_thread(knowledge.remove, body.doc_id):
            raise HTTPException(status_code=404, detail="no such document")
        return {"removed": True}

    @api.get("/api/kb/search")
    async def kb_search(q: str, mode: Literal["hybrid", "keyword", "vector"] = "hybrid", k: int = 10) -> list[Any]:
        try:
            hits = await asyncio.to_thread(knowledge.kb.search, q, min(max(k, 1), 50), mode)
        except ValueError as e:  # meaning search asked for while it is off
            raise HTTPException(status_code=400, detail=str(e)) from None
        marks = await asyncio.to_thread(highlights, [h.text for h in hits], q)  # the words, for the page to mark
        return [{**asdict(h), "citation": h.citation, "marks": found} for h, found in zip(hits, marks, strict=True)]

    @api.websocket("/api/kb/events")
    async def kb_events(socket: WebSocket) -> None:
        """Indexing progress as it happens: the status first, then every "kb.progress" event."""
        await socket.accept()
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        def deliver(event: KbProgress) -> None:  # called on indexing threads; serialized here, where it leaves
            loop.call_soon_threadsafe(queue.put_nowait, event.wire())

        stop_listening = knowledge.listen(deliver)
        try:
            status = KbStatus(status=await asyncio.to_thread(knowledge.status))
            await forward(socket, [status.wire()], queue)
        finally:
            stop_listening()

    @api.get("/api/kb/export/all")
    async def kb_export_all() -> Response:
        archive = await asyncio.to_thread(knowledge.export_zip)
        headers = {"Content-Disposition": 'attachment; filename="orkas-knowledge.zip"'}
        return Response(archive, media_type="application/zip", headers=headers)

    @api.get("/api/kb/export", response_class=PlainTextResponse)
    async def kb_export(doc_id: str) -> PlainTextResponse:
        try:
            text = await asyncio.to_thread(knowledge.kb.read, doc_id)
        except KeyError:
            raise HTTPException(status_code=404, detail="no such document") from None
        return PlainTextResponse(text, media_type="text/plain; charset=utf-8")

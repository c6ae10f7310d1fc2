"""The API routes and the UI's files. Every route sits behind `LocalOnly` (security.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from fastapi import FastAPI, HTTPException, Query, Request, WebSocket
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.requests import ClientDisconnect

from orkas import __version__
from orkas.adapter.attachments import AttachmentError, AttachmentStore
from orkas.adapter.conversations import Conversation
from orkas.adapter.knowledge import KnowledgeService
from orkas.adapter.preferences import change_preferences
from orkas.adapter.product_events import WIRE_VERSION
from orkas.adapter.provider_admin import NewProvider, add_provider, describe_providers, pools, remove_provider, reorder
from orkas.adapter.runtime import ConversationRuntime
from orkas.adapter.settings import Kind, SettingsStore
from orkas.adapter.vault import FileKey, Vault, VaultError
from orkas.core.errors import ConfigError, NotFound
from orkas.engine.codec import encode
from orkas.engine.memory import Memory
from orkas.engine.sandbox import PathDenied
from orkas.engine.sandbox.executor import confinement
from orkas.server.memory_routes import add_knowledge_routes, add_memory_routes
from orkas.server.security import LocalOnly
from orkas.server.sockets import forward

FRONTEND = Path(__file__).resolve().parents[3] / "frontend"
NO_STORE = {"Cache-Control": "no-store"}


@dataclass
class Services:
    """What the routes need beyond the runtime, built by the composition root."""

    settings: SettingsStore
    vault: Callable[[], Vault]  # opened when keys are touched, so the OS keyring wakes only then
    attachments: AttachmentStore
    protected: Callable[[], tuple[Path, ...]]  # never granted, never attached
    test_provider: Callable[[str], Awaitable[list[dict[str, Any]]]]
    detect_local: Callable[[], Awaitable[list[dict[str, Any]]]]
    memory: Memory | None = None
    knowledge: KnowledgeService | None = None
    sandbox: Callable[[], dict[str, Any]] | None = None  # what confines commands, in words
    frontend: Path = FRONTEND


class NewConversation(BaseModel):
    title: str = Field(default="", max_length=200)
    workspace: str | None = None


class Rename(BaseModel):
    title: str = Field(min_length=1, max_length=200)


class Send(BaseModel):
    text: str = Field(default="", max_length=200_000)
    attachments: list[str] = Field(default_factory=list, max_length=20)


class Answer(BaseModel):
    question_id: str
    decision: Literal["allow_once", "allow_run", "always", "deny"]


class Passphrase(BaseModel):
    passphrase: str = Field(min_length=1, max_length=1024)


class NewPassphrase(BaseModel):
    passphrase: str | None = Field(default=None, max_length=1024)  # None: remove the passphrase
    current: str | None = Field(default=None, max_length=1024)


class Folder(BaseModel):
    path: str = Field(min_length=1, max_length=4096)


class AddProvider(BaseModel):
    name: str
    kind: Kind
    key: str | None = Field(default=None, max_length=4096)
    base_url: str | None = None
    models: list[str] = Field(default_factory=list)


class Order(BaseModel):
    order: list[str]


class PreferencesChange(BaseModel):
    """Values are checked by the adapter (preferences.py), which says in a sentence what is allowed."""

    default_model: str | None = None
    mode: str | None = None
    theme: str | None = None
    language: str | None = None
    embeddings: str | None = None
    command_timeout: int | None = Field(default=None, ge=10, le=86_400)
    clear_default_model: bool = False


T = TypeVar("T")


@contextmanager
def _answered() -> Iterator[None]:
    """A store's refusal as a response: 404 for what does not exist, 400 with its message otherwise."""
    try:
        yield
    except PathDenied as e:
        raise HTTPException(status_code=400, detail=f"{e.path} cannot be used: {e.reason}") from None
    except NotFound as e:
        raise HTTPException(status_code=404, detail=str(e)) from None
    except ConfigError as e:
        raise HTTPException(status_code=400, detail=str(e)) from None


def _config(action: Callable[[], T]) -> T:
    with _answered():
        return action()


def _message_view(message: Any) -> dict[str, Any]:
    """A transcript message for the UI: image bytes are left out (the text line names the file)."""
    data: dict[str, Any] = encode(message)
    for block in data.get("content", []):
        if isinstance(block, dict) and block.get("type") == "image":
            block.pop("data", None)
    return data


def _shown_files(record: dict[str, Any]) -> dict[str, Any]:
    """An unsent message's attachments as the UI shows them: never where they are stored."""
    keep = ("name", "size", "media_type")
    return {"attachments": [{k: a.get(k) for k in keep} for a in record.get("attachments", [])]}


def create_app(
    *, token: str, port: int, runtime: ConversationRuntime, providers: list[str], services: Services | None = None
) -> LocalOnly:
    conversations = runtime.store
    api = FastAPI(title="Orkas", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)

    if services is not None and services.frontend.is_dir():
        frontend = services.frontend
        api.mount("/static", StaticFiles(directory=frontend), name="static")

        @api.get("/")
        async def page() -> FileResponse:
            return FileResponse(frontend / "index.html", headers=NO_STORE)

    @api.get("/api/status")
    async def status() -> dict[str, Any]:
        sandbox = services.sandbox() if services is not None and services.sandbox is not None else None
        return {"version": __version__, "providers": providers, "sandbox": sandbox or {"kind": confinement()}}

    @api.get("/api/conversations")
    async def conversations_list() -> list[dict[str, Any]]:
        return [{**asdict(c), "running": c.id in runtime.active} for c in conversations.recent()]

    @api.post("/api/conversations", status_code=201)
    async def conversations_create(body: NewConversation) -> dict[str, Any]:
        workspace = Path(body.workspace).expanduser() if body.workspace else None
        return asdict(_config(lambda: conversations.create(title=body.title, workspace=workspace)))

    @api.get("/api/conversations/{conversation_id}")
    async def conversations_get(conversation_id: str) -> dict[str, Any]:
        return asdict(_config(lambda: conversations.get(conversation_id)))

    @api.patch("/api/conversations/{conversation_id}")
    async def conversations_rename(conversation_id: str, body: Rename) -> dict[str, Any]:
        return asdict(_config(lambda: conversations.rename(conversation_id, body.title)))

    @api.delete("/api/conversations/{conversation_id}", status_code=204)
    async def conversations_delete(conversation_id: str) -> None:
        """To the recycle bin: its run and background processes stop, and chat_search forgets it."""
        with _answered():
            await runtime.delete(conversation_id)

    @api.get("/api/recycle")
    async def recycle_list() -> list[dict[str, Any]]:
        return [asdict(c) for c in conversations.deleted()]

    @api.post("/api/recycle/{conversation_id}/restore")
    async def recycle_restore(conversation_id: str) -> dict[str, Any]:
        with _answered():
            return asdict(await runtime.restore(conversation_id))

    @api.get("/api/conversations/{conversation_id}/processes")
    async def processes_list(conversation_id: str) -> list[dict[str, Any]]:
        _config(lambda: conversations.get(conversation_id))
        return [asdict(p) for p in runtime.processes.listed(conversation_id)]

    @api.post("/api/conversations/{conversation_id}/processes/stop")
    async def processes_stop(conversation_id: str) -> dict[str, int]:
        """Stop all: every background process this conversation started."""
        _config(lambda: conversations.get(conversation_id))
        return {"stopped": await runtime.processes.stop(conversation_id)}

    @api.get("/api/conversations/{conversation_id}/messages")
    async def conversations_messages(conversation_id: str) -> dict[str, Any]:
        snap = _config(lambda: runtime.snapshot(conversation_id))
        return {
            "v": WIRE_VERSION,
            "id": conversation_id,
            "messages": [_message_view(m) for m in snap.messages],
            "after": snap.after,
            "running": snap.running,
            "repaired": bool(snap.report and snap.report.changed),
            "unsent": [{k: v for k, v in r.items() if k != "attachments"} | _shown_files(r) for r in snap.unsent],
        }

    @api.post("/api/conversations/{conversation_id}/unsent/{message_id}/resend", status_code=202)
    async def unsent_resend(conversation_id: str, message_id: str) -> dict[str, Any]:
        """Send again a message that could not be sent (no provider then)."""
        return _config(lambda: runtime.resend(conversation_id, message_id))

    @api.post("/api/conversations/{conversation_id}/unsent/{message_id}/discard")
    async def unsent_discard(conversation_id: str, message_id: str) -> dict[str, bool]:
        _config(lambda: runtime.discard(conversation_id, message_id))
        return {"discarded": True}

    @api.get("/api/search")
    async def search(q: str) -> list[dict[str, Any]]:
        return [{"conversation": asdict(h.conversation), "snippet": h.snippet} for h in conversations.search(q)]

    @api.post("/api/conversations/{conversation_id}/messages", status_code=202)
    async def conversations_send(conversation_id: str, body: Send) -> dict[str, Any]:
        if not body.text.strip() and not body.attachments:
            raise HTTPException(status_code=422, detail="write something or attach a file")
        files = []
        if body.attachments:
            if services is None:
                raise HTTPException(status_code=400, detail="attachments are not available here")
            files = _config(lambda: services.attachments.get(conversation_id, body.attachments))
        return _config(lambda: runtime.send(conversation_id, body.text, files))

    @api.post("/api/conversations/{conversation_id}/stop")
    async def conversations_stop(conversation_id: str) -> dict[str, bool]:
        return {"stopped": runtime.stop(conversation_id)}

    @api.post("/api/conversations/{conversation_id}/answers")
    async def conversations_answer(conversation_id: str, body: Answer) -> dict[str, bool]:
        answered = runtime.answer(conversation_id, body.question_id, body.decision)
        if not answered:
            raise HTTPException(status_code=404, detail="no open question with that id")
        return {"answered": True}

    if services is not None:
        _add_service_routes(api, runtime, services)

    @api.websocket("/api/events")
    async def events(socket: WebSocket, conversation: str = "", after: int = 0) -> None:
        await socket.accept()
        await socket.send_json({"type": "hello", "v": WIRE_VERSION, "version": __version__})
        if not conversation:
            await socket.close()
            return
        backlog, queue = runtime.subscribe(conversation, after)
        try:
            await forward(socket, backlog, queue)
        finally:
            runtime.unsubscribe(conversation, queue)

    return LocalOnly(api, token=token, port=port)


def _add_service_routes(api: FastAPI, runtime: ConversationRuntime, services: Services) -> None:
    conversations = runtime.store

    def conversation(conversation_id: str) -> Conversation:
        return _config(lambda: conversations.get(conversation_id))

    @api.post("/api/conversations/{conversation_id}/attachments", status_code=201)
    async def attachments_upload(
        conversation_id: str, request: Request, name: str = Query(min_length=1, max_length=255)
    ) -> dict[str, Any]:
        """The file's bytes as the body (application/octet-stream), written to disk as they arrive."""
        found = conversation(conversation_id)
        upload = await asyncio.to_thread(services.attachments.incoming, found, name)
        try:
            async for chunk in request.stream():
                await asyncio.to_thread(upload.write, chunk)
            return asdict(await asyncio.to_thread(upload.finish))
        except AttachmentError as e:
            raise HTTPException(status_code=413, detail=str(e)) from None
        except ClientDisconnect:
            await asyncio.to_thread(upload.abort)
            raise HTTPException(status_code=400, detail="the upload was cut off") from None
        except BaseException:
            await asyncio.to_thread(upload.abort)
            raise

    @api.post("/api/conversations/{conversation_id}/grants")
    async def grants_add(conversation_id: str, body: Folder) -> dict[str, Any]:
        folder = Path(body.path).expanduser()
        if not folder.is_dir():
            raise HTTPException(status_code=400, detail=f"{body.path} is not a folder")
        protected = services.protected()
        return asdict(_config(lambda: conversations.grant(conversation_id, folder, protected=protected)))

    @api.post("/api/conversations/{conversation_id}/grants/remove")
    async def grants_remove(conversation_id: str, body: Folder) -> dict[str, Any]:
        return asdict(_config(lambda: conversations.revoke(conversation_id, body.path)))

    @api.get("/api/settings")
    async def settings_get() -> dict[str, Any]:
        product = _config(services.settings.load)
        vault = services.vault() if product.providers else None
        return {
            "providers": describe_providers(product, vault),
            "pools": pools(product),
            "preferences": asdict(product.preferences),
            "vault": vault.key_source.description if vault is not None else None,
            "vault_key": services.vault().key_source.state(),
            "sandbox": services.sandbox() if services.sandbox is not None else {"kind": confinement()},
        }

    @api.post("/api/vault/unlock")
    async def vault_unlock(body: Passphrase) -> dict[str, object]:
        """Unlock a passphrase-protected key file for this launch (a wrong passphrase is a 403)."""
        source = services.vault().key_source
        if isinstance(source, FileKey):
            try:
                await asyncio.to_thread(source.unlock, body.passphrase)
            except VaultError as e:
                raise HTTPException(status_code=403, detail=str(e)) from None
        return source.state()

    @api.post("/api/vault/passphrase")
    async def vault_passphrase(body: NewPassphrase) -> dict[str, object]:
        """Protect the key file with a passphrase, change it, or (passphrase null) remove it. When one is
        set, the current passphrase is needed: an open window must not be enough to strip it."""
        source = services.vault().key_source
        if not isinstance(source, FileKey):
            raise HTTPException(status_code=409, detail="the OS keyring keeps the vault's key; there is no key file")

        def change() -> None:
            if source.protected:
                source.unlock(body.current or "")
            if body.passphrase is None:
                source.unprotect()
            else:
                source.protect(body.passphrase)

        try:
            await asyncio.to_thread(change)
        except VaultError as e:
            wrong = "wrong passphrase" in str(e)
            raise HTTPException(status_code=403 if wrong else 400, detail=str(e)) from None
        return source.state()

    @api.put("/api/settings/preferences")
    async def preferences_set(body: PreferencesChange) -> dict[str, Any]:
        changes = body.model_dump(exclude={"clear_default_model"})
        with _answered():
            preferences = await change_preferences(
                services.settings, changes, clear_default_model=body.clear_default_model, knowledge=services.knowledge
            )
        return asdict(preferences)

    @api.post("/api/providers", status_code=201)
    async def providers_add(body: AddProvider) -> dict[str, Any]:
        product = _config(services.settings.load)
        new = NewProvider(body.name, body.kind, key=body.key, base_url=body.base_url, models=tuple(body.models))
        vault = services.vault()
        _config(lambda: add_provider(product, vault, new))
        services.settings.save(product)
        shown = describe_providers(product, vault)
        return next(p for p in shown if p["name"] == body.name)

    @api.delete("/api/providers/{name}", status_code=204)
    async def providers_remove(name: str) -> None:
        product = _config(services.settings.load)
        _config(lambda: remove_provider(product, services.vault(), name))
        services.settings.save(product)

    @api.put("/api/providers/order")
    async def providers_order(body: Order) -> dict[str, Any]:
        product = _config(services.settings.load)
        _config(lambda: reorder(product, body.order))
        services.settings.save(product)
        return {"pools": pools(product)}

    @api.post("/api/providers/{name}/test")
    async def providers_test(name: str) -> dict[str, Any]:
        return {"results": await services.test_provider(name)}

    if services.memory is not None:
        add_memory_routes(api, services.memory)
    if services.knowledge is not None:
        add_knowledge_routes(api, services.knowledge)

    @api.get("/api/local-servers")
    async def local_servers() -> list[dict[str, Any]]:
        return await services.detect_local()

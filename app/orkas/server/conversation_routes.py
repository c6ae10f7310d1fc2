"""The conversation routes: conversations, their messages and event stream, the recycle bin,
background processes, messages not sent, attachments and granted folders."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, Field
from starlette.requests import ClientDisconnect

from orkas.adapter.conversations import export
from orkas.adapter.conversations.attachments import AttachmentError
from orkas.adapter.conversations.folders import work_folder
from orkas.adapter.conversations.pages import PAGE
from orkas.adapter.conversations.runtime import ConversationRuntime
from orkas.adapter.conversations.search import SearchIndex
from orkas.adapter.conversations.store import TUNABLE
from orkas.adapter.wire import WIRE_VERSION, TitleChanged, hello
from orkas.core.errors import ConfigError
from orkas.engine.catalog import lookup
from orkas.engine.codec import encode
from orkas.engine.messages import AssistantMessage, Message
from orkas.engine.tools.base import summarize
from orkas.engine.turn import CONTINUE_NOTE
from orkas.server.answers import answered, config, too_late
from orkas.server.routing import Api, HTTPException, Query, Request, Response, WebSocket
from orkas.server.sockets import forward

if TYPE_CHECKING:
    from orkas.server.services import Services


MAX_PAGE = 1000  # messages in one page of history, at most


class NewConversation(BaseModel):
    title: str = Field(default="", max_length=200)
    workspace: str | None = None


class Workspace(BaseModel):
    workspace: str = Field(min_length=1, max_length=4096)


class Change(BaseModel):
    """A conversation's title, its pin, its model and how it answers: any of them. `model: ""` goes back
    to the app's default model; `temperature: null` to the model's own."""

    title: str | None = Field(default=None, min_length=1, max_length=200)
    pinned: bool | None = None
    model: str | None = Field(default=None, max_length=300)
    instructions: str | None = Field(default=None, max_length=20_000)
    temperature: float | None = Field(default=None, ge=0, le=2)
    reasoning: Literal["off", "low", "medium", "high"] | None = None
    agent: str | None = Field(default=None, max_length=64)  # "": Orkas itself


class Send(BaseModel):
    text: str = Field(default="", max_length=200_000)
    attachments: list[str] = Field(default_factory=list, max_length=20)


class Edit(BaseModel):
    text: str = Field(max_length=200_000)


class Version(BaseModel):
    after: str = Field(max_length=100)  # the fork point ("" = the start)
    index: int = Field(ge=0)


class Answer(BaseModel):
    question_id: str
    decision: Literal["allow_once", "allow_run", "always", "deny"]


class Folder(BaseModel):
    path: str = Field(min_length=1, max_length=4096)


def _bindable(services: Services | None, conversation_id: str, name: str) -> None:
    """A conversation may be bound to a named agent of Orkas's own (not an outside CLI), and never a group."""
    agents = services.agents.load().agents if services is not None and services.agents is not None else {}
    spec = agents.get(name)
    if spec is None:
        raise ConfigError(f"no agent {name!r}; agents: {', '.join(agents) or 'none'} (Settings → Agents)")
    if spec.backend:
        raise ConfigError(f"{name} is an outside agent ({spec.backend}): it answers in a group conversation")
    if services is not None and services.members is not None and services.members.is_group(conversation_id):
        raise ConfigError("a group conversation has members already: mention one with @name instead")


def _message_view(message: Any) -> dict[str, Any]:
    """A transcript message for the UI: image bytes are left out (the text line names the file); an
    answer carries what it cost, from the model catalogue's price, so the figure survives a reload (a `partial` one,
    stopped or cut, what the provider had counted by then: at least that)."""
    data: dict[str, Any] = encode(message)
    for block in data.get("content", []):
        if isinstance(block, dict) and block.get("type") == "image":
            block.pop("data", None)
        if isinstance(block, dict) and block.get("type") == "tool_use":  # its one line, as the live tool_start's
            block["summary"] = summarize(None, block.get("input") or {})
    if isinstance(message, AssistantMessage):
        price = lookup(message.model).price
        data["cost"] = price.cost(message.usage) if price is not None else None
        data["usage"] = asdict(message.usage)  # named, as the live events name them (on disk it is a list)
    return data


def _shown_files(record: dict[str, Any]) -> dict[str, Any]:
    """An unsent message's attachments as the UI shows them: never where they are stored."""
    keep = ("name", "size", "media_type")
    return {"attachments": [{k: a.get(k) for k in keep} for a in record.get("attachments", [])]}


async def _views(services: Services | None, conversation_id: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    views = [_message_view(m) for m in messages]
    if services is not None:  # attachments by id: an image is fetched by it and shown inline
        ids = await asyncio.to_thread(services.attachments.ids_by_path, conversation_id)
        for block in (b for v in views for b in v.get("content", ()) if b.get("type") == "attachment"):
            block["id"] = ids.get(block.get("path", ""), "")
    return views


async def history_payload(
    runtime: ConversationRuntime,
    services: Services | None,
    conversation_id: str,
    limit: int | None = None,
    before: str = "",
) -> dict[str, Any]:
    """A conversation's history and the sequence number to stream after: the desktop's and the phone
    mirror's one shape. With a `limit`, only its newest page (`older`: the cursor for the page before it);
    with `before` too, only the page before that message (`messages`, `older` and `versions`: nothing else)."""
    if before:
        page = await runtime.earlier(conversation_id, before, limit or PAGE)
        return {
            "messages": await _views(services, conversation_id, page.messages),
            "older": page.older,
            "versions": runtime.versions(conversation_id, page.messages),
        }
    snap = await runtime.opened(conversation_id, limit)
    return {
        "v": WIRE_VERSION,
        "id": conversation_id,
        "messages": await _views(services, conversation_id, snap.messages),
        "older": snap.older,
        "after": snap.after,
        "running": snap.running,
        "repaired": bool(snap.report and snap.report.changed),
        "unsent": [{k: v for k, v in r.items() if k != "attachments"} | _shown_files(r) for r in snap.unsent],
        "group": snap.group,  # a group conversation's bus records (None for one agent)
        "versions": [] if snap.group is not None else runtime.versions(conversation_id, snap.messages),
        "continue_note": CONTINUE_NOTE,  # "Continue" sends this: the view shows it as a marker
    }


async def receive_upload(
    runtime: ConversationRuntime, services: Services, conversation_id: str, request: Request, name: str
) -> dict[str, Any]:
    """An attachment's bytes as the body, written to disk as they arrive (the desktop's and the phone's)."""
    found = config(lambda: runtime.store.get(conversation_id))
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


async def attached_image(
    runtime: ConversationRuntime, services: Services, conversation_id: str, attachment_id: str
) -> Response:
    """An attached image, to show inline in the chat (the desktop's and the phone's). Only the conversation's
    own image attachments: any other id (or file type) is a 404, and the response can never run as a page."""
    config(lambda: runtime.store.get(conversation_id))
    found = await asyncio.to_thread(services.attachments.image, conversation_id, attachment_id)
    if found is None:
        raise HTTPException(status_code=404, detail="no such image in this conversation")
    data = await asyncio.to_thread(Path(found.path).read_bytes)
    headers = {"Content-Security-Policy": "default-src 'none'", "X-Content-Type-Options": "nosniff"}
    return Response(data, media_type=found.media_type, headers=headers)


def add_conversation_routes(api: Api, runtime: ConversationRuntime, services: Services | None) -> None:
    conversations = runtime.store

    @api.get("/api/conversations")
    async def conversations_list() -> list[dict[str, Any]]:
        # Running (a terminal's run too), and whether it waits for the person's approval: said in the list.
        return [
            {**asdict(c), "running": runtime.running(c.id), "waiting": runtime.waiting(c.id)}
            for c in conversations.recent()
        ]

    @api.post("/api/conversations", status_code=201)
    async def conversations_create(body: NewConversation) -> dict[str, Any]:
        workspace = Path(body.workspace) if body.workspace else None
        protected = services.protected() if services is not None else ()
        return asdict(config(lambda: conversations.create(title=body.title, workspace=workspace, protected=protected)))

    @api.post("/api/conversations/workspace")
    async def conversations_workspace(body: Workspace) -> dict[str, str]:
        """Whether a chat may work in this folder, before one is made ("In a folder…"): the resolved folder, or
        400 saying why not. Making the chat checks again, the same way (folders.work_folder)."""
        protected = services.protected() if services is not None else ()
        return {"workspace": str(config(lambda: work_folder(Path(body.workspace), protected)))}

    @api.get("/api/conversations/{conversation_id}/export")
    async def conversations_export(conversation_id: str, format: Literal["md", "zip"] = "md") -> Response:
        """The conversation as Markdown, or as a zip with its JSON records and its attachments."""
        with answered():
            chat = conversations.get(conversation_id)
            snap = await runtime.opened(conversation_id)
        title = chat.title or "Conversation"
        if format == "md":
            text = export.as_markdown(title, snap.messages, snap.group)
            return Response(
                text,
                media_type="text/markdown; charset=utf-8",
                headers={"Content-Disposition": attachment(title, "md")},
            )
        folder = services.attachments.folder(conversation_id) if services is not None else None
        data = await asyncio.to_thread(export.as_zip, title, asdict(chat), snap.messages, snap.group, folder)
        return Response(data, media_type="application/zip", headers={"Content-Disposition": attachment(title, "zip")})

    @api.get("/api/conversations/{conversation_id}/usage")
    async def conversations_usage(conversation_id: str) -> dict[str, Any]:
        """What the conversation has used so far, every actor and call together (the usage ledger)."""
        config(lambda: conversations.get(conversation_id))
        if services is None or services.usage is None:
            return {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost": 0.0, "unpriced_calls": 0}
        totals = await asyncio.to_thread(services.usage.conversation, conversation_id)
        return asdict(totals)

    @api.get("/api/conversations/{conversation_id}")
    async def conversations_get(conversation_id: str) -> dict[str, Any]:
        return asdict(config(lambda: conversations.get(conversation_id)))

    @api.patch("/api/conversations/{conversation_id}")
    async def conversations_change(conversation_id: str, body: Change) -> dict[str, Any]:
        with answered():
            changed = conversations.get(conversation_id)
            # Every check before any change: a refused request changes nothing (a title was saved before an unknown
            # agent was refused).
            tuned = {name: getattr(body, name) for name in body.model_fields_set & TUNABLE}
            if tuned.get("reasoning", "off") is None:
                raise ConfigError("reasoning must be off, low, medium or high")
            if tuned.get("agent"):
                _bindable(services, conversation_id, str(tuned["agent"]))
            elif "agent" in tuned:
                tuned["agent"] = ""
            if body.title is not None:
                changed = conversations.rename(conversation_id, body.title)
                # every view of it hears (a phone's open chat kept the old name in its header)
                runtime.publish(conversation_id, TitleChanged(title=changed.title))
            if body.pinned is not None:
                changed = conversations.pin(conversation_id, body.pinned)
            if tuned:
                changed = conversations.tune(conversation_id, tuned)
        return asdict(changed)

    @api.delete("/api/conversations/{conversation_id}", status_code=204)
    async def conversations_delete(conversation_id: str) -> None:
        """To the recycle bin: its run and background processes stop, and chat_search forgets it."""
        with answered():
            await runtime.delete(conversation_id)

    @api.get("/api/recycle")
    async def recycle_list() -> list[dict[str, Any]]:
        return [asdict(c) for c in conversations.deleted()]

    @api.post("/api/recycle/{conversation_id}/restore")
    async def recycle_restore(conversation_id: str) -> dict[str, Any]:
        with answered():
            return asdict(await runtime.restore(conversation_id))

    @api.get("/api/conversations/{conversation_id}/processes")
    async def processes_list(conversation_id: str) -> list[dict[str, Any]]:
        config(lambda: conversations.get(conversation_id))
        return [asdict(p) for p in runtime.processes.listed(conversation_id)]

    @api.post("/api/conversations/{conversation_id}/processes/stop")
    async def processes_stop(conversation_id: str) -> dict[str, int]:
        """Stop all: every background process this conversation started."""
        config(lambda: conversations.get(conversation_id))
        return {"stopped": await runtime.processes.stop(conversation_id)}

    @api.get("/api/conversations/{conversation_id}/messages")
    async def conversations_messages(
        conversation_id: str, limit: int | None = Query(default=None, ge=1, le=MAX_PAGE), before: str = ""
    ) -> dict[str, Any]:
        """The history (its newest `limit` messages, or the page before message `before`: pages.py)."""
        with answered():
            return await history_payload(runtime, services, conversation_id, limit, before)

    @api.get("/api/conversations/{conversation_id}/versions")
    async def versions_list(conversation_id: str) -> list[dict[str, Any]]:
        """Where the conversation has other versions (after a turn that forked it ends, the arrows)."""
        with answered():
            snap = await runtime.opened(conversation_id)
        return [] if snap.group is not None else runtime.versions(conversation_id, snap.messages)

    @api.post("/api/conversations/{conversation_id}/messages/{message_id}/edit", status_code=202)
    async def message_edit(conversation_id: str, message_id: str, body: Edit) -> dict[str, Any]:
        """Send the edited text in place of that message; the old version stays reachable."""
        if not body.text.strip():
            raise HTTPException(status_code=422, detail="the edited message is empty")
        with answered():
            return await runtime.edit(conversation_id, message_id, body.text)

    @api.post("/api/conversations/{conversation_id}/messages/{message_id}/regenerate", status_code=202)
    async def message_regenerate(conversation_id: str, message_id: str) -> dict[str, Any]:
        """Answer that message again (another answer, or a retry after an error)."""
        with answered():
            return await runtime.regenerate(conversation_id, message_id)

    @api.post("/api/conversations/{conversation_id}/versions")
    async def versions_switch(conversation_id: str, body: Version) -> dict[str, bool]:
        """Show another version of the conversation from a fork point (the arrows on a message)."""
        with answered():
            await runtime.switch_version(conversation_id, body.after, body.index)
        return {"switched": True}

    @api.post("/api/conversations/{conversation_id}/continue", status_code=202)
    async def conversations_continue(conversation_id: str) -> dict[str, Any]:
        """After an answer cut off at the output limit: ask the model to go on."""
        return config(lambda: runtime.send(conversation_id, CONTINUE_NOTE))

    @api.post("/api/conversations/{conversation_id}/unsent/{message_id}/resend", status_code=202)
    async def unsent_resend(conversation_id: str, message_id: str) -> dict[str, Any]:
        """Send again a message that could not be sent (no provider then)."""
        return config(lambda: runtime.resend(conversation_id, message_id))

    @api.post("/api/conversations/{conversation_id}/unsent/{message_id}/discard")
    async def unsent_discard(conversation_id: str, message_id: str) -> dict[str, bool]:
        config(lambda: runtime.discard(conversation_id, message_id))
        return {"discarded": True}

    groups = services.members if services is not None else None

    def group_said(conversation_id: str) -> list[tuple[str, str]] | None:
        if groups is None or not groups.is_group(conversation_id):
            return None
        return [(r["id"], r.get("text") or r.get("dispatch") or "") for r in groups.history(conversation_id)]

    index = SearchIndex(conversations, group_said)

    @api.get("/api/search")
    async def search(q: str) -> list[dict[str, Any]]:
        """The chats whose title or messages say `q`; an empty `q` finds nothing and reads every chat not read
        yet (the window asks so when its search box gets the focus: the first search is then as quick)."""
        if not q.strip():
            await asyncio.to_thread(index.warm)
            return []
        hits = await asyncio.to_thread(index.search, q)  # may read transcripts: off the event loop
        return [
            {"conversation": asdict(h.conversation), "snippet": h.snippet, "message_id": h.message_id} for h in hits
        ]

    @api.post("/api/conversations/{conversation_id}/messages", status_code=202)
    async def conversations_send(conversation_id: str, body: Send) -> dict[str, Any]:
        if not body.text.strip() and not body.attachments:
            raise HTTPException(status_code=422, detail="write something or attach a file")
        files = []
        if body.attachments:
            if services is None:
                raise HTTPException(status_code=400, detail="attachments are not available here")
            files = config(lambda: services.attachments.get(conversation_id, body.attachments))
        return config(lambda: runtime.send(conversation_id, body.text, files))

    @api.post("/api/conversations/{conversation_id}/stop")
    async def conversations_stop(conversation_id: str) -> dict[str, bool]:
        config(lambda: conversations.get(conversation_id))  # a chat that is none is a 404, not "nothing to stop"
        return {"stopped": config(lambda: runtime.stop(conversation_id))}

    @api.post("/api/conversations/{conversation_id}/answers")
    async def conversations_answer(conversation_id: str, body: Answer) -> Any:
        answered = config(lambda: runtime.answer(conversation_id, body.question_id, body.decision))
        if not answered:
            return too_late(runtime.answer_given(conversation_id, body.question_id))
        return {"answered": True}

    @api.websocket("/api/events")
    async def events(socket: WebSocket, conversation: str = "", after: int = 0) -> None:
        await socket.accept()
        await socket.send_json(hello())
        if not conversation:
            await socket.close()
            return
        try:
            backlog, queue = runtime.subscribe(conversation, after)
        except ConfigError as e:  # not an id at all (a path, a NUL, too long): said, not a server error
            await socket.close(code=1008, reason=str(e)[:120])
            return
        try:
            await forward(socket, backlog, queue)
        finally:
            runtime.unsubscribe(conversation, queue)

    if services is not None:
        _add_file_routes(api, runtime, services)


def _add_file_routes(api: Api, runtime: ConversationRuntime, services: Services) -> None:
    """Attachments and granted folders: what a conversation may read besides its workspace."""
    conversations = runtime.store

    @api.get("/api/conversations/{conversation_id}/attachments/{attachment_id}")
    async def attachments_image(conversation_id: str, attachment_id: str) -> Response:
        return await attached_image(runtime, services, conversation_id, attachment_id)

    @api.post("/api/conversations/{conversation_id}/attachments", status_code=201)
    async def attachments_upload(
        conversation_id: str, request: Request, name: str = Query(min_length=1, max_length=255)
    ) -> dict[str, Any]:
        """The file's bytes as the body (application/octet-stream), written to disk as they arrive."""
        return await receive_upload(runtime, services, conversation_id, request, name)

    @api.post("/api/conversations/{conversation_id}/grants")
    async def grants_add(conversation_id: str, body: Folder) -> dict[str, Any]:
        folder = Path(body.path).expanduser()
        if not folder.is_dir():
            raise HTTPException(status_code=400, detail=f"{body.path} is not a folder")
        protected = services.protected()
        return asdict(config(lambda: conversations.grant(conversation_id, folder, protected=protected)))

    @api.post("/api/conversations/{conversation_id}/grants/remove")
    async def grants_remove(conversation_id: str, body: Folder) -> dict[str, Any]:
        return asdict(config(lambda: conversations.revoke(conversation_id, body.path)))


def attachment(title: str, extension: str) -> str:
    """A download named after the chat, in any script: the name itself as RFC 5987's UTF-8 `filename*` (a
    Chinese title answered 500: a header is Latin-1), and an ASCII one beside it for clients that know no other."""
    name = re.sub(r'[\\/:*?"<>|\x00-\x1f]+', "_", title).strip(" .") or "conversation"
    plain = re.sub(r"[^A-Za-z0-9 ._-]+", "_", name).strip(" ._") or "conversation"
    return f"attachment; filename=\"{plain}.{extension}\"; filename*=UTF-8''{quote(f'{name}.{extension}', safe='')}"

"""Checkpoints and rewind, for the window (`/api/…`) and the phone (the mirror's `/m/api/v1/…`, paired devices
only): the person's messages a rewind can start from, the preview of one (nothing changes), the rewind, and the
files' undo. The runtime does it all (adapter/conversations/rewinds.py); `orkas session rewind` calls the same."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from orkas.adapter.conversations.runtime import ConversationRuntime
from orkas.server.answers import answered
from orkas.server.routing import Api, Query, Request


class Undo(BaseModel):
    before: str | None = Field(default=None, max_length=64)
    after: str | None = Field(default=None, max_length=64)
    index: int | None = Field(default=None, ge=0, le=10_000)


class Rewind(BaseModel):
    to: str = Field(min_length=1, max_length=64)
    mode: Literal["both", "files", "conversation"] = "both"


def add_rewind_routes(
    api: Api,
    runtime: ConversationRuntime,
    prefix: str = "/api",
    check: Callable[[Request], object] = lambda r: None,
) -> None:
    base = f"{prefix}/conversations/{{conversation_id}}"

    @api.get(f"{base}/checkpoints")
    async def checkpoints(conversation_id: str, request: Request) -> list[dict[str, Any]]:
        check(request)
        with answered():
            return runtime.checkpoint_list(conversation_id)

    @api.get(f"{base}/rewind")
    async def rewind_preview(
        conversation_id: str,
        request: Request,
        to: str = Query(min_length=1, max_length=64),
        mode: Literal["both", "files", "conversation"] = "both",
    ) -> dict[str, Any]:
        """What rewinding to before message `to` would do: files restored, created, deleted; what it cannot undo."""
        check(request)
        with answered():
            return await runtime.rewind_preview(conversation_id, to, mode)

    @api.post(f"{base}/rewind")
    async def rewind(conversation_id: str, body: Rewind, request: Request) -> dict[str, Any]:
        check(request)
        with answered():
            return await runtime.rewind(conversation_id, body.to, body.mode)

    @api.post(f"{base}/rewind/undo")
    async def rewind_undo(conversation_id: str, request: Request, body: Undo | None = None) -> dict[str, Any]:
        """A rewind taken back, as its answer named it: the files as they were just before it (`before`), the
        conversation's version it put aside (`after`, `index`). With no body: the last rewind's files."""
        check(request)
        given = body or Undo()
        with answered():
            return await runtime.undo_rewind(conversation_id, given.before, given.after, given.index)

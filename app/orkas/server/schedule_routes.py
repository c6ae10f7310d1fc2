"""Settings → Schedules: the conversations' schedules, made, switched and removed; and who fires them.

- `GET /api/schedules`: each schedule with its conversation's title and its next and last run; `firing`: "here"
  (this app fires them), "elsewhere" (another Orkas process, its pid in `runner`) or "nothing" (none runs: said
  plainly, with what would); `timezone`: this machine's;
- `POST /api/schedules` {conversation, prompt, when, timezone?}: 201 and the schedule, or 400 with what `when` may be;
- `PATCH /api/schedules/{id}` {enabled}; `DELETE /api/schedules/{id}`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from orkas.adapter.conversations.store import Conversation
from orkas.adapter.schedules.store import ScheduleStore
from orkas.adapter.schedules.when import local_zone
from orkas.core.errors import ConfigError, NotFound
from orkas.server.routing import Api, HTTPException


class ScheduleNew(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conversation: str = Field(min_length=1, max_length=64)
    prompt: str = Field(min_length=1, max_length=8000)
    when: str = Field(min_length=1, max_length=200)
    timezone: str | None = Field(default=None, max_length=64)


class ScheduleChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: StrictBool


def add_schedule_routes(
    api: Api,
    store: ScheduleStore,
    conversations: Callable[[], Sequence[Conversation]],
    exists: Callable[[str], bool],
    changed: Callable[[], None],
) -> None:
    """`conversations`: the person's chats (for titles); `exists`: whether one may be given a schedule; `changed`:
    tells the scheduler to look again."""

    def listed() -> dict[str, Any]:
        titles = {c.id: c.title for c in conversations()}
        runner = store.runner()
        firing = "nothing" if runner is None else "here" if runner == os.getpid() else "elsewhere"
        schedules = [asdict(s) | {"title": titles.get(s.conversation, "")} for s in store.load()]
        return {"schedules": schedules, "firing": firing, "runner": runner, "timezone": local_zone()}

    @api.get("/api/schedules")
    async def schedules_list() -> dict[str, Any]:
        try:
            return await asyncio.to_thread(listed)
        except ConfigError as e:
            raise HTTPException(status_code=500, detail=str(e)) from None

    @api.post("/api/schedules", status_code=201)
    async def schedules_add(body: ScheduleNew) -> dict[str, Any]:
        if not await asyncio.to_thread(exists, body.conversation):
            raise HTTPException(status_code=404, detail=f"no conversation {body.conversation!r}")
        try:
            made = await asyncio.to_thread(store.add, body.conversation, body.prompt, body.when, body.timezone)
        except ConfigError as e:
            raise HTTPException(status_code=400, detail=str(e)) from None
        changed()
        return asdict(made)

    @api.patch("/api/schedules/{schedule_id}")
    async def schedules_change(schedule_id: str, body: ScheduleChange) -> dict[str, Any]:
        try:
            changed_one = await asyncio.to_thread(store.set_enabled, schedule_id, body.enabled)
        except NotFound as e:
            raise HTTPException(status_code=404, detail=str(e)) from None
        changed()
        return asdict(changed_one)

    @api.delete("/api/schedules/{schedule_id}")
    async def schedules_remove(schedule_id: str) -> dict[str, Any]:
        try:
            removed = await asyncio.to_thread(store.remove, schedule_id)
        except NotFound as e:
            raise HTTPException(status_code=404, detail=str(e)) from None
        changed()
        return {"removed": removed.id}

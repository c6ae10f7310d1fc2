"""Instruction files and trust: what a chat's folder instructs, the person's answer about it, and their own
instructions brought from the terminal agents (adapter/conversations/instructions.py, adapter/settings/trust.py,
adapter/settings/personal.py — the CLI's `orkas trust` calls the same)."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from orkas.adapter.settings import personal
from orkas.server.answers import answered, config
from orkas.server.routing import Api, HTTPException, Query

if TYPE_CHECKING:
    from orkas.adapter.conversations.instructions import Instructions
    from orkas.adapter.conversations.store import ConversationStore
    from orkas.adapter.settings.store import SettingsStore


class TrustAnswer(BaseModel):
    folder: str = Field(min_length=1, max_length=4096)
    answer: Literal["trusted", "declined"]


class TrustRef(BaseModel):
    folder: str = Field(min_length=1, max_length=4096)


class PersonalChoice(BaseModel):
    key: Literal["claude", "codex", "gemini", ""] = ""
    how: Literal["live", "import", "no"]


def add_instructions_routes(
    api: Api, instructions: Instructions, store: ConversationStore, settings: SettingsStore, home: Path
) -> None:
    @api.get("/api/instructions")
    async def instructions_get(
        conversation: str | None = Query(default=None, max_length=64),
        workspace: str | None = Query(default=None, max_length=4096),
    ) -> dict[str, Any]:
        """The instruction files a chat (or a folder a new chat will work in) has, their text, the trust answer."""
        if conversation:
            with answered():
                chat = await asyncio.to_thread(store.get, conversation)
            return (await asyncio.to_thread(instructions.status, chat)).as_json()
        if not workspace or not Path(workspace).is_dir():
            raise HTTPException(status_code=400, detail="name a conversation or a folder")
        return (await asyncio.to_thread(instructions.for_folder, Path(workspace))).as_json()

    @api.get("/api/trust")
    async def trust_list() -> dict[str, Any]:
        listed = instructions.trust.trusted()
        return {"folders": [{"folder": a.folder, "since": a.at} for a in listed], "problem": instructions.trust.problem}

    @api.post("/api/trust")
    async def trust_set(body: TrustAnswer) -> dict[str, Any]:
        """The person's answer for a folder: its files instruct (or stay outside data) from the next turn."""
        return asdict(config(lambda: instructions.trust.set(Path(body.folder), body.answer)))

    @api.post("/api/trust/remove")
    async def trust_remove(body: TrustRef) -> dict[str, bool]:
        if not instructions.trust.remove(Path(body.folder)):
            raise HTTPException(status_code=404, detail=f"{body.folder} is not a trusted folder")
        return {"removed": True}

    @api.get("/api/personal-instructions")
    async def personal_get() -> dict[str, Any]:
        """The other agents' instruction files that exist (names only: nothing is read before the answer)."""
        preferences = settings.load().preferences
        return {
            "found": personal.found(home),
            "offered": preferences.instructions_offered,
            "personal_file": preferences.personal_file,
            "personal_instructions": preferences.personal_instructions,
        }

    @api.post("/api/personal-instructions")
    async def personal_choose(body: PersonalChoice) -> dict[str, Any]:
        chosen = config(lambda: personal.choose(settings, home, body.key, body.how))
        return {"personal_file": chosen.personal_file, "personal_instructions": chosen.personal_instructions}

"""The two tools a reflection call gets (and no other call): `skill_manage` over the agent's learned skills
and `memo_write` for its self-understanding memo. A refused write is an error result the model reads."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from orkas.engine.evolution.memo import LIMITS, Memo, MemoRejected, Part
from orkas.engine.evolution.store import LearnedSkillError, LearnedSkills
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result

# Before creating: the names of existing learned skills much like the new one (the knowledge base's search).
Similar = Callable[[str], Sequence[str]]


class SkillManage:
    name = "skill_manage"
    description = (
        "Keep a reusable procedure as a learned skill. Actions: create (name, description saying WHEN to use it, "
        "content: the steps as imperatives), patch (name, old: an exact unique part of the body, new), read (name), "
        "delete (name). Prefer patching a similar skill over creating a near-duplicate."
    )
    read_only = False
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["create", "patch", "read", "delete"]},
            "name": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"},
            "description": {"type": "string", "maxLength": 1024},
            "content": {"type": "string", "maxLength": 100_000},
            "old": {"type": "string"},
            "new": {"type": "string"},
        },
        "required": ["action", "name"],
        "additionalProperties": False,
    }

    def __init__(self, skills: LearnedSkills, similar: Similar = lambda _text: ()) -> None:
        self.skills = skills
        self.similar = similar

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        action, name = input["action"], input["name"]
        try:
            if action == "read":
                return text_result(await asyncio.to_thread(self.skills.read, name))
            if action == "delete":
                await asyncio.to_thread(self.skills.delete, name)
                return text_result(f"deleted learned skill {name}")
            if action == "patch":
                if "old" not in input or "new" not in input:
                    return error_result("patch needs 'old' (an exact part of the body) and 'new'")
                await asyncio.to_thread(self.skills.patch, name, input["old"], input["new"], input.get("description"))
                return text_result(f"patched {name}")
            description, content = input.get("description", ""), input.get("content", "")
            if not content.strip():
                return error_result("create needs 'content': the steps, as imperatives")
            near = [n for n in await asyncio.to_thread(self.similar, f"{name} {description}") if n != name]
            if near:
                return error_result(
                    f"similar learned skills exist: {', '.join(near[:3])}. Read one and patch it instead of creating "
                    "a near-duplicate (or pick a clearly different name and purpose)."
                )
            await asyncio.to_thread(self.skills.create, name, description, content)
            return text_result(f"created learned skill {name}")
        except LearnedSkillError as e:
            return error_result(str(e))


class MemoWrite:
    name = "memo_write"
    description = (
        "Rewrite one part of your self-understanding memo, whole (merge with what it says now; no duplicates): "
        f"'competence' — what you are good at and where you stumble (≤ {LIMITS['competence']:,} characters); "
        f"'strategies' — WHEN … THEN … rules for this person and domain (≤ {LIMITS['strategies']:,})."
    )
    read_only = False
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "part": {"type": "string", "enum": ["competence", "strategies"]},
            "text": {"type": "string", "maxLength": 20_000},
        },
        "required": ["part", "text"],
        "additionalProperties": False,
    }

    def __init__(self, memo: Memo) -> None:
        self.memo = memo

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        part: Part = input["part"]
        try:
            await asyncio.to_thread(self.memo.write, part, input["text"])
        except MemoRejected as e:
            return error_result(str(e))
        return text_result(f"{part} saved ({len(input['text'].strip()):,} characters)")

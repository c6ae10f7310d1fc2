"""`schedule`: the agent proposes that this conversation run a prompt later, or again and again; the person accepts
it on a card (in every mode: a schedule acts while they are away), and it is kept as if made in Settings."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from orkas.adapter.schedules.store import ScheduleStore
from orkas.core.errors import ConfigError
from orkas.engine.consent import Ask
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result


class ScheduleTool:
    name = "schedule"
    read_only = False
    description = (
        "Propose that this conversation run a prompt later (once) or on a schedule, while the person is away; they "
        "accept or refuse it on a card. `when`: words (`every weekday at 8:00`, `every day at 18:30`, `every monday "
        "at 9`, `every 30 minutes`, `in 2 hours`, `tomorrow at 9:00`, `at 2026-12-07 08:00`) or a cron line "
        "(`0 8 * * 1-5`), in the person's time zone unless `timezone` names another. Each run is an ordinary turn of "
        "this conversation: write `prompt` as the person would, complete on its own."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "minLength": 1, "maxLength": 8000},
            "when": {"type": "string", "minLength": 1, "maxLength": 200},
            "timezone": {"type": "string", "maxLength": 64},
        },
        "required": ["prompt", "when"],
        "additionalProperties": False,
    }

    def __init__(self, store: ScheduleStore, conversation: str) -> None:
        self.store = store
        self.conversation = conversation

    def summarize(self, input: Mapping[str, Any]) -> str:
        return str(input.get("when", ""))

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from orkas.adapter.schedules.when import local_zone, next_time, parse, zone  # time zones: when proposed

        tz = str(input.get("timezone") or local_zone())
        try:
            now = self.store.now()
            upcoming = next_time(parse(input["when"], tz, now), tz, now)
        except ConfigError as e:
            return error_result(str(e))
        if upcoming is None:
            return error_result(f"{input['when']!r} is in the past")
        first = datetime.fromtimestamp(upcoming, zone(tz)).strftime("%a %d %b %Y %H:%M")
        preview = f"Run in this conversation {input['when']} ({tz}; first {first}):\n{input['prompt']}"
        proposal = Ask(tool=self.name, level="proposal", categories=("schedule",), preview=preview, key=None,
                       choices=("allow_once", "deny"))  # fmt: skip
        if not await ctx.ask(proposal):
            return error_result("not scheduled: the person did not accept this schedule")
        try:
            made = self.store.add(self.conversation, input["prompt"], input["when"], tz)
        except ConfigError as e:
            return error_result(str(e))
        return text_result(
            f"Scheduled ({made.id}): {made.when} ({tz}), first {first}. It runs while Orkas is open or `orkas serve "
            "--background` runs; the person can change it in Settings → Schedules.",
            details={"schedule": made.id, "next": made.next},
        )

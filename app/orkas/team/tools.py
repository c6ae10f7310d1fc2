"""The commander's three tools. Each runs its target through the group's one path (`Dispatcher`), so a
person's @mention, a dispatch and a hand-off share the bus, the slices, the caps and the stop.

- `dispatch_to {to, message}`: runs the agent to completion; its answer is its own bubble and comes back
  as `<worker-result from="NAME">…</worker-result>` for the commander to build on. Parallel-safe.
- `run_worker {task, to?}`: without `to`, an anonymous worker that knows only the task (its output is not
  a bubble); with `to`, like dispatch_to.
- `hand_off_to {to, message}`: the agent's bubble is this turn's answer (no synthesis call); an
  interactive agent then holds the floor until it hands back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result


class Dispatcher(Protocol):
    async def dispatch(self, to: str, message: str, *, kind: str, ctx: ToolContext) -> tuple[str, bool]:
        """Run `to` on `message`; returns (the text for the commander, whether it failed)."""
        ...

    async def worker(self, task: str, *, ctx: ToolContext) -> tuple[str, bool]: ...

    def members_line(self) -> str: ...


def _required(input: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = input.get(name)
        if not isinstance(value, str) or not value.strip():
            return f"{name} is required (a non-empty string)"
    return None


@dataclass
class DispatchTo:
    team: Dispatcher
    name: str = "dispatch_to"
    read_only: bool = True  # asks nothing itself (the agent's own tools ask); runs beside other dispatches
    description: str = (
        "Ask a member agent to do a task and wait for its answer. The agent replies in its own message, "
        "which the person sees; you get it back as <worker-result from=NAME> and must add what is new "
        "(a synthesis, the next step), not repeat it. Several dispatch_to calls in one reply run in parallel."
    )
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {
            "type": "object",
            "properties": {
                "to": {"type": "string", "description": "the member agent's name"},
                "message": {"type": "string", "description": "the task, self-contained"},
            },
            "required": ["to", "message"],
            "additionalProperties": False,
        }
    )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        if problem := _required(input, "to", "message"):
            return error_result(f"{problem}. {self.team.members_line()}")
        text, failed = await self.team.dispatch(str(input["to"]), str(input["message"]), kind="dispatch", ctx=ctx)
        return error_result(text) if failed else text_result(text)


@dataclass
class RunWorker:
    team: Dispatcher
    name: str = "run_worker"
    read_only: bool = True
    description: str = (
        "Run a task on a worker. Without `to`: an anonymous worker that sees only the task (no conversation, "
        "no skills) — make the task self-contained; the person sees only a progress card. With `to`: the "
        "named member agent, exactly like dispatch_to."
    )
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "everything the worker needs to know"},
                "to": {"type": "string", "description": "optional: a member agent's name"},
            },
            "required": ["task"],
            "additionalProperties": False,
        }
    )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        if problem := _required(input, "task"):
            return error_result(problem)
        to = input.get("to")
        if isinstance(to, str) and to.strip():
            text, failed = await self.team.dispatch(to.strip(), str(input["task"]), kind="dispatch", ctx=ctx)
        else:
            text, failed = await self.team.worker(str(input["task"]), ctx=ctx)
        return error_result(text) if failed else text_result(text)


@dataclass
class HandOffTo:
    team: Dispatcher
    name: str = "hand_off_to"
    read_only: bool = False  # a barrier: a hand-off ends the turn, so it never runs beside other calls
    description: str = (
        "Give the person's request to a member agent whose answer is the final answer of this turn (you "
        "will not write after it). An interactive agent then keeps talking with the person until it hands "
        "back."
    )
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {
            "type": "object",
            "properties": {
                "to": {"type": "string", "description": "the member agent's name"},
                "message": {"type": "string", "description": "what the agent should take over, self-contained"},
            },
            "required": ["to", "message"],
            "additionalProperties": False,
        }
    )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        if problem := _required(input, "to", "message"):
            return error_result(f"{problem}. {self.team.members_line()}")
        text, failed = await self.team.dispatch(str(input["to"]), str(input["message"]), kind="handoff", ctx=ctx)
        if failed:
            return error_result(text)  # the commander goes on: a failed hand-off is not an answer
        return ToolResult(content=text_result(text).content, ends_turn=True)

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

from orkas.core.errors import ConfigError
from orkas.engine.consent import Ask
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result
from orkas.team.agents import AgentSpec, parse, render


class Dispatcher(Protocol):
    @property
    def can_create(self) -> bool:
        """Whether new agents can be saved (the group has an agent store)."""
        ...

    async def dispatch(self, to: str, message: str, *, kind: str, ctx: ToolContext) -> tuple[str, bool]:
        """Run `to` on `message`; returns (the text for the commander, whether it failed)."""
        ...

    async def worker(self, task: str, *, ctx: ToolContext) -> tuple[str, bool]: ...

    def members_line(self) -> str: ...

    def create_agent(self, spec: AgentSpec) -> str:
        """Save the accepted agent and make it a member; returns what the commander is told."""
        ...


def _to_member(message: str) -> dict[str, Any]:
    """The input of a tool that sends a member a message (dispatch_to, hand_off_to)."""
    return {
        "type": "object",
        "properties": {
            "to": {"type": "string", "description": "the member agent's name"},
            "message": {"type": "string", "description": message},
        },
        "required": ["to", "message"],
        "additionalProperties": False,
    }


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
    input_schema: Mapping[str, Any] = field(default_factory=lambda: _to_member("the task, self-contained"))

    def summarize(self, input: Mapping[str, Any]) -> str:
        return f"→ {input.get('to', '?')}: {input.get('message', '')}"

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
        default_factory=lambda: _to_member("what the agent should take over, self-contained")
    )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        if problem := _required(input, "to", "message"):
            return error_result(f"{problem}. {self.team.members_line()}")
        text, failed = await self.team.dispatch(str(input["to"]), str(input["message"]), kind="handoff", ctx=ctx)
        if failed:
            return error_result(text)  # the commander goes on: a failed hand-off is not an answer
        return ToolResult(content=text_result(text).content, ends_turn=True)


@dataclass
class CreateAgent:
    """The commander proposes a new agent; it exists only once the person accepts the card showing its
    whole AGENT.md (a question in every mode: refused in plan mode, and where nobody can answer)."""

    team: Dispatcher
    name: str = "create_agent"
    read_only: bool = False
    description: str = (
        "Propose a new member agent when no member fits a recurring need. The person sees its full "
        "instructions and decides; if accepted it joins this conversation and you can dispatch to it."
    )
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "lowercase letters, digits, - or _"},
                "description": {"type": "string", "description": "when to use it"},
                "prompt": {"type": "string", "description": "its instructions"},
                "interactive": {"type": "boolean"},
            },
            "required": ["name", "description", "prompt"],
            "additionalProperties": False,
        }
    )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        if not self.team.can_create:
            return error_result("agents cannot be created here")
        if problem := _required(input, "name", "description", "prompt"):
            return error_result(problem)
        spec = AgentSpec(
            name=str(input["name"]).strip(),
            description=str(input["description"]).strip(),
            prompt=str(input["prompt"]),
            interactive=bool(input.get("interactive", False)),
        )
        try:
            parse(render(spec), folder_name=spec.name)  # the checks a hand-written file gets
        except ConfigError as e:
            return error_result(f"not proposed: {e}")
        ask = Ask(tool=self.name, level="dangerous", categories=("creates_agent",), preview=render(spec), key=None)
        if not await ctx.ask(ask):
            return error_result("the person did not accept this agent; it was not created")
        try:
            return text_result(self.team.create_agent(spec))
        except ConfigError as e:
            return error_result(str(e))

"""Hooks: the person's own checks around a run — before and after each tool call, when a prompt is submitted, and
when the agent is about to stop. The engine says when and with what; what runs (commands from a settings file, in
the sandbox) is the product's (adapter/hooks/).

Each point of a run hands a `Hooks` an event and its payload (the JSON a hook reads) and gets an `Outcome`:
- PreToolUse: `block` refuses the call, the reason given to the model as the call's result;
- PostToolUse: `block` or `context` is added to the call's result for the model (the call has already run);
- UserPromptSubmit: `block` refuses the prompt (it never reaches the model; the person sees why), `context` is
  added to it;
- Stop: `block` keeps the agent going, the reason given to it as the next message (`stop_hook_active` says so on
  the next stop, and after MAX_CONTINUES the run ends anyway).
A hook may need the person's approval before its first run: `approvals` names those, and the engine asks them as
it asks for any tool (on the call's card, or on the turn's for the prompt and stop), and passes what was allowed.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from orkas.engine.consent import Ask, Permissions
from orkas.engine.events import PermissionRequest, RunWarning, permission_request

Event = Literal["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"]
MAX_CONTINUES = 5  # a Stop hook keeps a run going at most this many times
ALL_EVENTS: frozenset[Event] = frozenset(("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"))
TOOL_EVENTS: frozenset[Event] = frozenset(("PreToolUse", "PostToolUse"))  # what a group's member fires


@dataclass(frozen=True, slots=True)
class Outcome:
    block: str | None = None  # why (PreToolUse: the call is refused; UserPromptSubmit: the prompt; Stop: go on)
    context: str = ""  # more for the model to read
    notes: tuple[str, ...] = ()  # for the person: a hook that failed, timed out or said something


class Hooks(Protocol):
    def wants(self, event: Event, tool: str | None = None) -> bool:
        """Any hook for this event (and tool)? Cheap: asked before every call."""
        ...

    def approvals(self, event: Event, tool: str | None = None) -> list[Ask]:
        """What must be approved before the hooks for this event may run (each once; `Ask.key` remembers it)."""
        ...

    async def run(self, event: Event, payload: Mapping[str, Any], approved: frozenset[str]) -> Outcome:
        """Run the hooks for `event`; `approved`: the keys of `approvals` the person allowed."""
        ...


AskFn = Callable[[Ask], Awaitable[bool]]


async def fire(
    hooks: Hooks | None, event: Event, payload: Mapping[str, Any], ask: AskFn, tool: str | None = None
) -> Outcome:
    """Ask what needs asking, then run the hooks for `event`."""
    if hooks is None or not hooks.wants(event, tool):
        return Outcome()
    approved = frozenset([a.key for a in hooks.approvals(event, tool) if a.key is not None and await ask(a)])
    return await hooks.run(event, payload, approved)


async def fire_on_turn(
    hooks: Hooks, event: Event, payload: Mapping[str, Any], permissions: Permissions, said: list[Outcome]
) -> AsyncGenerator[PermissionRequest | RunWarning, None]:
    """Fire `event` where there is no tool call to hang its questions on (the prompt, the stop): each approval its
    hooks need is yielded for the views and its answer awaited, then the hooks run; their notes are yielded as
    warnings, and the outcome is put in `said`."""
    approved: set[str] = set()
    for ask in hooks.approvals(event):
        decided = permissions.immediate(ask)
        if decided is None:
            question = permissions.question(ask)
            yield permission_request(question, "")
            decided = await permissions.wait(question)
        if decided and ask.key is not None:
            approved.add(ask.key)
    outcome = await hooks.run(event, payload, frozenset(approved))
    for note in outcome.notes:
        yield RunWarning(message=note)
    said.append(outcome)

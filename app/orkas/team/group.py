"""One conversation as a group: a commander that hosts it and member agents with their own voice.

A person's message is posted to the bus once, then goes to whoever it is for: the `@name`d members,
else the floor holder (the commander by default, or the interactive agent a hand-off gave the floor).
Every actor — commander, member, anonymous worker — runs on the engine's one run loop, with its own
transcript (`actors/<name>.jsonl`) and the same stop signal, permissions and budget. What an actor is
told comes from the bus: its slice since it last ran (`bus.render_for`), so an agent never sees what it
was not part of, and a worker sees only its task.

The folder of a group conversation:

    messages.jsonl   the bus: every visible message, once, in order
    state.json       the floor, the members, the task log, each actor's read position
    actors/          each actor's engine transcript
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any, Protocol

from orkas.adapter.conversations.sessions import PersistentSession, load
from orkas.engine.abort import AbortSignal
from orkas.engine.budget import Budget
from orkas.engine.consent import Permissions
from orkas.engine.runner import Agent
from orkas.engine.steer import SteerQueue
from orkas.engine.tools.base import Tool
from orkas.team.agents import AgentSpec, AgentStore
from orkas.team.bus import Bus
from orkas.team.events import ActorEvent
from orkas.team.slots import limited
from orkas.team.state import StateStore
from orkas.team.turn import Answered, Turn, Worktrees

log = logging.getLogger(__name__)

DISPATCH_CAP = 4  # member runs at once per conversation
MODEL_CALLS = 10  # model calls streaming at once, every conversation together


class MakeAgent(Protocol):
    """(the member's spec — None for the commander or an anonymous worker —, extra tools, extra system
    text, the folder it works in when not the conversation's: its git worktree) → an engine Agent, with
    the member's own model when it names one."""

    def __call__(
        self, spec: AgentSpec | None, tools: Sequence[Tool], note: str, workspace: Path | None = None
    ) -> Agent: ...


_shared_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def model_slots(limit: int = MODEL_CALLS) -> asyncio.Semaphore:
    """The one cap on concurrent model calls for this event loop (every group shares it; a loop that
    ends takes its semaphore with it)."""
    loop = asyncio.get_running_loop()
    if loop not in _shared_slots:
        _shared_slots[loop] = asyncio.Semaphore(limit)
    return _shared_slots[loop]


class Group:
    def __init__(
        self,
        folder: Path,
        *,
        agents: Mapping[str, AgentSpec],
        make_agent: MakeAgent,
        dispatch_cap: int = DISPATCH_CAP,
        slots: asyncio.Semaphore | None = None,
        store: AgentStore | None = None,
        worktrees: Worktrees | None = None,
    ) -> None:
        self.worktrees = worktrees
        self.folder = folder
        self.agent_store = store  # where the commander's accepted proposals are saved (create_agent)
        self.agents = dict(agents)
        self.make_agent = make_agent
        self.dispatch_cap = dispatch_cap
        self.slots = slots
        self.bus = Bus(folder / "messages.jsonl")
        self.store = StateStore(folder / "state.json")
        self.interrupted = self.store.recover()  # tasks a crash cut short: the person decides
        self._sessions: dict[str, PersistentSession] = {}
        self.active: Turn | None = None

    @property
    def state(self) -> Any:
        return self.store.state

    @property
    def members(self) -> list[str]:
        return list(self.store.state.members)

    def set_members(self, names: Sequence[str]) -> None:
        self.store.set_members(names, self.agents)

    def session(self, actor: str) -> PersistentSession:
        if actor not in self._sessions:
            path = self.folder / "actors" / f"{actor}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            self._sessions[actor] = load(path)[0] if path.exists() else PersistentSession(path)
        return self._sessions[actor]

    def close(self) -> None:
        for session in self._sessions.values():
            session.close()
        self._sessions.clear()

    def agent(self, spec: AgentSpec | None, tools: Sequence[Tool], note: str, workspace: Path | None = None) -> Agent:
        agent = self.make_agent(spec, tools, note, workspace)
        if agent.providers is not None:  # an external agent CLI makes no model calls of Orkas's own
            agent.providers = limited(agent.providers, self.slots or model_slots())
        return agent

    async def send(
        self,
        text: str,
        *,
        signal: AbortSignal | None = None,
        steer: SteerQueue | None = None,
        permissions: Permissions | None = None,
        budget: Budget | None = None,
        attachments: Sequence[dict[str, Any]] = (),
        answered: Answered | None = None,
        message_id: str | None = None,
    ) -> AsyncGenerator[ActorEvent, None]:
        """Run one message of the person's through the group; ends with exactly one `TurnEnd`. `answered`: how a
        question an actor asked was answered, kept on its bubble's tool trail (a reload draws the card)."""
        turn = Turn(self, signal or AbortSignal(), steer or SteerQueue(), permissions, budget, answered)
        self.active = turn
        try:
            async with aclosing(turn.run(text, attachments, message_id)) as events:
                async for event in events:
                    yield event
        finally:
            self.active = None

    def steer(self, message: Any) -> bool:
        """A message typed while a turn runs joins the floor holder's run at its next tool boundary."""
        if self.active is None:
            return False
        self.active.steer.put(message)
        return True

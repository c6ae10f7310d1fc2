"""The app's conversations as groups: what the runtime and the server need from the team layer.

A conversation becomes a group when its first member joins (`set_members`; the old transcript becomes the
commander's, see migrate.py). Until then it runs as one agent, as it always did. `run` takes one of the
person's messages through the group and publishes every event, tagged with its actor.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from orkas.adapter.conversations.store import Conversation
from orkas.adapter.wire import ProductEvent
from orkas.core.errors import ConfigError, NotFound
from orkas.engine.abort import AbortSignal
from orkas.engine.budget import Budget
from orkas.engine.consent import Permissions
from orkas.engine.messages import AssistantMessage, Message, TextBlock, UserMessage
from orkas.engine.runner import Agent
from orkas.engine.steer import SteerQueue
from orkas.engine.tools.base import Tool
from orkas.team.agents import AgentSpec, AgentStore
from orkas.team.bus import COMMANDER, USER, Bus, in_asked_order
from orkas.team.group import DISPATCH_CAP, MODEL_CALLS, Group, model_slots
from orkas.team.migrate import ensure_group_layout
from orkas.team.state import StateStore
from orkas.team.turn import Answered, Worktrees

CONVERSATION_ID = re.compile(r"^[0-9a-f]{8,64}\Z")
MakeActor = Callable[[Conversation, AgentSpec | None, Sequence[Tool], str, Path | None], Agent]
Publish = Callable[[ProductEvent, str | None], None]


class GroupRunner:
    def __init__(
        self,
        root: Path,
        agents: AgentStore,
        make_agent: MakeActor,
        worktrees: Callable[[Conversation], Worktrees | None] | None = None,
        *,
        dispatch_cap: int = DISPATCH_CAP,
        model_calls: int = MODEL_CALLS,
    ) -> None:
        self.dispatch_cap = dispatch_cap
        self.model_calls = model_calls
        self.root = root  # the conversations folder
        self.agents = agents
        self.make_agent = make_agent
        self.worktrees = worktrees  # per conversation: git worktrees in its workspace

    def folder(self, conversation_id: str) -> Path:
        """The conversation's folder; NotFound for an id that is not one (never a path outside the root)."""
        if not CONVERSATION_ID.match(conversation_id) or not (self.root / conversation_id / "meta.json").exists():
            raise NotFound(f"no conversation {conversation_id!r}")
        return self.root / conversation_id

    def is_group(self, conversation_id: str) -> bool:
        """Once a member has joined, a conversation stays a group (the commander alone still hosts it)."""
        return (self.folder(conversation_id) / "state.json").exists()

    def _open(self, conversation: Conversation) -> Group:
        """The group, to run a turn (opening it recovers a crash: see `_state`)."""
        loaded = self.agents.load().agents

        def make(spec: AgentSpec | None, tools: Sequence[Tool], note: str, workspace: Path | None = None) -> Agent:
            return self.make_agent(conversation, spec, tools, note, workspace)

        trees = self.worktrees(conversation) if self.worktrees else None
        slots = model_slots(self.model_calls)
        return Group(
            self.folder(conversation.id),
            agents=loaded,
            make_agent=make,
            store=self.agents,
            worktrees=trees,
            dispatch_cap=self.dispatch_cap,
            slots=slots,
        )

    def members(self, conversation_id: str) -> dict[str, Any]:
        available = [spec.public() for spec in self.agents.load().agents.values()]
        if not self.is_group(conversation_id):  # one agent: its messages.jsonl is a transcript, not a bus
            return {"members": [], "floor": COMMANDER, "floor_source": "default", "tasks": [], "agents": available}
        state = self._state(conversation_id).state
        return {
            "members": list(state.members),
            "floor": state.floor,
            "floor_source": state.floor_source,
            "tasks": [_task(t) for t in state.tasks],
            "agents": available,
        }

    def set_members(self, conversation_id: str, names: list[str]) -> dict[str, Any]:
        folder = self.folder(conversation_id)
        if not names and not self.is_group(conversation_id):
            return self.members(conversation_id)  # nothing to do: it stays one agent
        bound = _bound_agent(folder)
        if names and bound and not self.is_group(conversation_id):
            raise ConfigError(
                f"this chat is answered by {bound}: set Chat settings → Answered by to Orkas before adding members "
                "(a group is hosted by Orkas, which hands work to its members)"
            )
        migrated = ensure_group_layout(folder)
        store = self._state(conversation_id)
        store.set_members(names, self.agents.load().agents)  # ConfigError for an agent that does not exist
        if migrated:  # the commander's transcript already holds everything the bus was rebuilt from
            store.state.cursors[COMMANDER] = Bus(folder / "messages.jsonl").last_id or ""
            store.save()
        return self.members(conversation_id)

    def hand_back(self, conversation_id: str) -> bool:
        """The floor back to the commander, between turns (a running turn keeps its state in memory and would
        write over this: the caller refuses while one runs). True when it moved."""
        return self.is_group(conversation_id) and self._state(conversation_id).hand_back()

    def _state(self, conversation_id: str) -> StateStore:
        """The group's state as it is on disk — read, never recovered (a crash is recovered where a turn
        starts: a reader while a turn runs would otherwise mark that turn's tasks interrupted)."""
        return StateStore(self.folder(conversation_id) / "state.json")

    def check(self, conversation: Conversation) -> None:
        """Raise ConfigError (no provider, a bad model) before the message is posted anywhere."""
        self.make_agent(conversation, None, (), "", None)

    def history(self, conversation_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        records = [m.record() for m in Bus(self.folder(conversation_id) / "messages.jsonl").messages]
        return in_asked_order(records if limit is None else records[:limit])

    def size(self, conversation_id: str) -> int:
        return len(self.history(conversation_id))

    def as_messages(self, conversation_id: str) -> list[Message]:
        """The bus as plain messages, for the past-conversations index (who said it, then what)."""
        messages: list[Message] = []
        for record in self.history(conversation_id):
            text = str(record.get("text") or "").strip()
            if not text:
                continue
            if record["from"] == USER:
                messages.append(UserMessage(content=(TextBlock(text=text),)))
            else:
                said = TextBlock(text=f"{record['from']}: {text}")
                messages.append(
                    AssistantMessage(content=(said,), provider="group", model=str(record.get("model") or ""))
                )
        return messages

    async def run(
        self,
        conversation: Conversation,
        text: str,
        *,
        attachments: Sequence[dict[str, Any]],
        signal: AbortSignal,
        steer: SteerQueue,
        permissions: Permissions,
        budget: Budget | None,
        publish: Publish,
        answered: Answered | None = None,
        message_id: str | None = None,
    ) -> bool:
        """One message of the person's through the group; True when the turn ended well."""
        group = self._open(conversation)
        ok = False
        try:
            async for item in group.send(
                text,
                signal=signal,
                steer=steer,
                permissions=permissions,
                budget=budget,
                attachments=attachments,
                answered=answered,
                message_id=message_id,
            ):
                publish(item.event, item.actor)
                if getattr(item.event, "type", "") == "turn_end":
                    ok = bool(getattr(item.event, "ok", False))
        finally:
            group.close()
        return ok


def _task(task: Any) -> dict[str, Any]:
    return {name: getattr(task, name) for name in ("id", "owner", "goal", "status", "created", "result")}


def _bound_agent(folder: Path) -> str:
    """The named agent a one-agent conversation is bound to ("" when none), from its metadata."""
    import json

    try:
        meta = json.loads((folder / "meta.json").read_text())
    except (OSError, ValueError):
        return ""
    return str(meta.get("agent") or "") if isinstance(meta, dict) else ""

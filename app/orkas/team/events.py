"""What a group turn yields: every engine event tagged with the actor that produced it, and the group's
own events (a message posted to the bus, the floor moving, mentions nobody answers to, the turn's end).

Text deltas of different actors are never merged: each `ActorEvent` carries one actor's event.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from orkas.engine.events import Event
from orkas.team.bus import GroupMessage


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagePosted:
    message: GroupMessage
    type: Literal["group_message"] = "group_message"


@dataclass(frozen=True, slots=True, kw_only=True)
class StateChanged:
    floor: str
    floor_source: str
    open_tasks: int
    type: Literal["state_changed"] = "state_changed"


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownMentions:
    names: tuple[str, ...]
    delivered_to: str  # who got the message instead (the floor holder)
    type: Literal["unknown_mentions"] = "unknown_mentions"


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEnd:
    ok: bool
    aborted: bool
    floor: str
    message: str = ""  # why it failed, when it did
    type: Literal["turn_end"] = "turn_end"


TeamEvent = MessagePosted | StateChanged | UnknownMentions | TurnEnd


@dataclass(frozen=True, slots=True)
class ActorEvent:
    actor: str  # commander, an agent's name, a worker id, or "group" for the group's own events
    event: Event | TeamEvent


def team_event_dict(event: TeamEvent) -> dict[str, Any]:
    if isinstance(event, MessagePosted):
        return {"type": event.type, "message": event.message.record()}
    return asdict(event)

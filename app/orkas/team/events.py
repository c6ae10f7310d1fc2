"""What a group turn yields: every engine event tagged with the actor that produced it, and the group's
own events (a message posted to the bus, the floor moving, mentions nobody answers to, the turn's end).
The group's events are product events, spelled once in adapter/wire.py.

Text deltas of different actors are never merged: each `ActorEvent` carries one actor's event.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from orkas.adapter.wire import MessagePosted, StateChanged, TurnEnd, UnknownMentions
from orkas.engine.events import Event

__all__ = ["ActorEvent", "MessagePosted", "StateChanged", "TeamEvent", "TurnEnd", "UnknownMentions", "team_event_dict"]

TeamEvent = MessagePosted | StateChanged | UnknownMentions | TurnEnd


@dataclass(frozen=True, slots=True)
class ActorEvent:
    actor: str  # commander, an agent's name, a worker id, or "group" for the group's own events
    event: Event | TeamEvent


def team_event_dict(event: TeamEvent) -> dict[str, Any]:
    data = asdict(event)
    if isinstance(event, MessagePosted):
        data["message"] = dict(event.message)
    return data

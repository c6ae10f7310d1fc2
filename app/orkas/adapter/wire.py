"""What a conversation's event stream carries, spelled once: the engine's run events plus the product's
own (the person's messages, the queue, answers, idle), each a frozen dataclass, and one serializer.

Every event on the wire has `v` (the wire format's version: a client that sees a newer one reloads
rather than guess), `seq` (its number in the conversation's stream) and `conversation`. The UI
dispatches on `type` (`on_<type>` in frontend/js/chat.js); `tests/ui/test_event_handlers.py` checks
that every type in `wire_types()` has a handler, so a renamed event cannot be dropped silently.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from orkas.engine.consent import Decision
from orkas.engine.events import Done, Error, Event, PermissionRequest, TextDelta, ThinkingDelta, plain

WIRE_VERSION = 2  # 2: group events and `actor`


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachmentShown:
    name: str
    size: int | None = None
    media_type: str | None = None
    id: str = ""  # the conversation's attachment (an image is shown inline, fetched by it)


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessageShown:
    """A message from the person joined the conversation (`from_queued`: the queued bubbles it replaces)."""

    message_id: str
    text: str
    attachments: tuple[AttachmentShown, ...] = ()
    from_queued: tuple[str, ...] = ()
    type: Literal["user_message"] = "user_message"


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageQueued:
    """Sent while a run was busy: it joins at the next safe point, or becomes the next turn."""

    message_id: str
    text: str
    attachments: tuple[AttachmentShown, ...] = ()
    type: Literal["message_queued"] = "message_queued"


@dataclass(frozen=True, slots=True, kw_only=True)
class QueuedApplied:
    """Queued messages became the next turn's message `message_id`."""

    message_ids: tuple[str, ...]
    message_id: str
    type: Literal["queued_applied"] = "queued_applied"


@dataclass(frozen=True, slots=True, kw_only=True)
class QueuedDropped:
    """The run was stopped with these messages still queued: the UI gives the words back."""

    message_ids: tuple[str, ...]
    type: Literal["queued_dropped"] = "queued_dropped"


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionAnswered:
    question_id: str
    decision: Decision
    by: str = ""  # who answered: "" for the desktop, else the paired phone's name
    expired: bool = False  # nobody answered within the question's time: a no
    unattended: bool = False  # asked where nobody can answer (`orkas run` without a terminal): a no
    stopped: bool = False  # the run was stopped while the question waited: a no
    type: Literal["permission_answered"] = "permission_answered"


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageNotSent:
    """The message could not start a run (`no_provider`: none is configured; `config`: the reason says
    what). It is kept, shown as not sent, until the person resends or discards it."""

    message_id: str
    text: str
    attachments: tuple[AttachmentShown, ...] = ()
    kind: Literal["no_provider", "config"]
    reason: str
    type: Literal["message_not_sent"] = "message_not_sent"


@dataclass(frozen=True, slots=True, kw_only=True)
class UnsentDiscarded:
    message_id: str
    type: Literal["unsent_discarded"] = "unsent_discarded"


@dataclass(frozen=True, slots=True, kw_only=True)
class Idle:
    """No run is going in this conversation any more."""

    type: Literal["idle"] = "idle"


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryChanged:
    """The transcript was forked (an edit, another answer) or switched to another version: views draw
    the history again."""

    type: Literal["history_changed"] = "history_changed"


@dataclass(frozen=True, slots=True, kw_only=True)
class TitleChanged:
    """The chat has a new title from the app: a short model call's after its first answer, or the first words of
    its first message once that was edited or another version of it shown."""

    title: str
    type: Literal["title_changed"] = "title_changed"


@dataclass(frozen=True, slots=True, kw_only=True)
class InstructionsInForce:
    """The project instruction files a run reads (AGENTS.md and kin, root → folder, relative to `root`), said as it
    starts: whether the person trusts the folder (else the model reads them only as outside data), and the files
    present but not read because another won in their folder (a CLAUDE.md beside an AGENTS.md)."""

    root: str
    files: tuple[str, ...]
    trusted: bool
    shadowed: tuple[str, ...] = ()
    type: Literal["instructions"] = "instructions"


# The group chat's own events (team/ emits them; every engine event of a group run carries `actor` on the
# wire: commander, an agent's name or a worker id).
@dataclass(frozen=True, slots=True, kw_only=True)
class MessagePosted:
    """A message reached the conversation's bus (team/bus.py): its record, as stored."""

    message: Mapping[str, Any]
    type: Literal["group_message"] = "group_message"


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupStart:
    """A group turn begins: who is in the group, and who holds the floor."""

    members: tuple[str, ...]
    floor: str
    type: Literal["group_start"] = "group_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class StateChanged:
    """Who holds the floor now (and how many tasks are open)."""

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
    """A group turn is over: every actor of it has ended."""

    ok: bool
    aborted: bool
    floor: str
    message: str = ""  # why it failed, when it did
    type: Literal["turn_end"] = "turn_end"


ProductOnly = (
    UserMessageShown
    | MessageQueued
    | QueuedApplied
    | QueuedDropped
    | PermissionAnswered
    | MessageNotSent
    | UnsentDiscarded
    | Idle
    | HistoryChanged
    | TitleChanged
    | InstructionsInForce
    | GroupStart
    | MessagePosted
    | StateChanged
    | UnknownMentions
    | TurnEnd
)
ProductEvent = ProductOnly | Event


@dataclass(frozen=True, slots=True, kw_only=True)
class Hello:
    """The first message on every event socket (the window's and the phone's): the wire's version, so a client that
    sees a newer one reloads rather than guess, and the app's."""

    version: str
    v: int = WIRE_VERSION
    type: Literal["hello"] = "hello"


def hello() -> dict[str, Any]:
    from orkas import __version__

    said = Hello(version=__version__)
    return {"type": said.type, "v": said.v, "version": said.version}


def run_failed(kind: Literal["provider", "internal"], message: str) -> Error:
    """A run that could not start or broke: the engine's own `error`, so the UI has one error shape."""
    return Error(kind=kind, message=message)


def to_wire(conversation_id: str, seq: int, event: ProductEvent, actor: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"v": WIRE_VERSION, "seq": seq, "conversation": conversation_id, "type": event.type}
    if actor is not None:
        data["actor"] = actor
    data.update((f.name, plain(getattr(event, f.name))) for f in dataclasses.fields(event) if f.name != "type")
    return data


def type_of(cls: type) -> str:
    """An event class's wire `type` (the default of its `type` field): spelled once, on the class. Read from the
    field, not the annotations: evaluating every class's hints at import cost each `orkas` start ~10 ms."""
    return str(cls.__dataclass_fields__["type"].default)  # type: ignore[attr-defined]


def _types(union: Any) -> set[str]:
    return {type_of(cls) for cls in typing.get_args(union)}


def wire_types() -> set[str]:
    """Every `type` a conversation's event stream can carry."""
    return _types(ProductOnly) | _types(Event)


_CLASSES: dict[str, type] = {type_of(cls): cls for cls in (*typing.get_args(ProductOnly), *typing.get_args(Event))}
# What a phone is told about whichever conversation it has open: an approval waits (or was given), a turn ended.
ALERTS: tuple[type, ...] = (PermissionRequest, PermissionAnswered, Done, Error, TurnEnd)
JOINABLE = frozenset(type_of(cls) for cls in (TextDelta, ThinkingDelta))  # deltas a view may join into one


class UnknownEvent(ValueError):
    """A stored event of a type this version does not know (written by a newer one)."""


def from_wire(data: Mapping[str, Any]) -> tuple[str, int, ProductEvent, str | None]:
    """(conversation, seq, event, actor) back from `to_wire`'s form: the event log on disk is read this way, so a
    restarted server holds typed events again. Raises `UnknownEvent` for a type it does not know."""
    cls = _CLASSES.get(str(data.get("type")))
    if cls is None:
        raise UnknownEvent(f"unknown event type {data.get('type')!r}")
    event = _decode(cls, data)
    return str(data.get("conversation", "")), int(data["seq"]), event, data.get("actor")


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(cls: type, data: Mapping[str, Any]) -> Any:
    hints = _hints(cls)
    given = {
        f.name: _value(hints[f.name], data[f.name])
        for f in dataclasses.fields(cls)
        if f.name != "type" and f.name in data
    }
    return cls(**given)


def _value(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint) and isinstance(value, Mapping):
        return _decode(hint, value)  # type: ignore[arg-type]
    if origin is tuple and isinstance(value, list | tuple):
        item = typing.get_args(hint)[0]
        return tuple(_value(item, v) for v in value)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        classes: list[type] = [a for a in members if isinstance(a, type) and dataclasses.is_dataclass(a)]
        if classes and isinstance(value, Mapping):
            by_type = {type_of(c): c for c in classes if "type" in _hints(c)}
            return _decode(by_type.get(str(value.get("type")), classes[0]), value)
        return _value(members[0], value) if len(members) == 1 else value
    return value

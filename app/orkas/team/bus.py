"""The conversation's canonical log: what the person sees, in order, each message once.

`messages.jsonl`, one fsynced JSON record per message (a torn last line is dropped on load, a corrupt
line skipped — never fatal). Timestamps are strictly increasing, so a commander turn split into
segments around an agent's bubble sorts the same everywhere: reload, reconnect, restart, phone.

Each actor's engine session is its own transcript; the bus is the group's record and the source of
each agent's slice (`visible_to`).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from orkas.engine.tools.untrusted import wrap

log = logging.getLogger(__name__)

USER = "user"
COMMANDER = "commander"


@dataclass(frozen=True, slots=True)
class GroupMessage:
    id: str
    ts: float
    sender: str  # "from" on disk: user | commander | an agent's name | a worker id
    text: str
    to: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()
    unknown_mentions: tuple[str, ...] = ()
    turn_id: str | None = None
    seg: int = 0  # the commander's bubble segment within its turn
    attachments: tuple[dict[str, Any], ...] = ()
    dispatch: str | None = None  # a hidden commander → agent task (shown as a card, not a bubble)
    process: tuple[dict[str, Any], ...] = ()  # the collapsed tool trail of the bubble
    failure: str | None = None
    stopped: bool = False  # the person's Stop ended it: drawn as "Stopped", never as a failure
    model: str | None = None
    usage: dict[str, int] | None = None
    cost: float | None = None
    counted_so_far: bool = False  # stopped or cut mid-call: `usage` and `cost` are what was counted, at least that
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        data = asdict(self)
        data["from"] = data.pop("sender")
        kept = {k: v for k, v in data.items() if v not in (None, (), [], {}, "") or k in ("text", "seg")}
        return {k: v for k, v in kept.items() if v is not False}

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> GroupMessage:
        return cls(
            id=str(data["id"]),
            ts=float(data["ts"]),
            sender=str(data["from"]),
            text=str(data.get("text", "")),
            to=tuple(data.get("to") or ()),
            mentions=tuple(data.get("mentions") or ()),
            unknown_mentions=tuple(data.get("unknown_mentions") or ()),
            turn_id=data.get("turn_id"),
            seg=int(data.get("seg", 0)),
            attachments=tuple(data.get("attachments") or ()),
            dispatch=data.get("dispatch"),
            process=tuple(data.get("process") or ()),
            failure=data.get("failure"),
            stopped=bool(data.get("stopped")),
            model=data.get("model"),
            usage=data.get("usage"),
            cost=data.get("cost"),
            counted_so_far=bool(data.get("counted_so_far")),
            extra=dict(data.get("extra") or {}),
        )

    def visible_to(self, actor: str) -> bool:
        """An agent's slice: what it sent, what was sent to it, what mentions it. The commander and
        the person see everything."""
        if actor in (COMMANDER, USER):
            return True
        return actor == self.sender or actor in self.to or actor in self.mentions


class Bus:
    def __init__(self, path: Path, *, clock: Any = time.time) -> None:
        self.path = path
        self.clock = clock
        self._lock = threading.Lock()
        self.messages: list[GroupMessage] = []
        self.skipped = 0  # corrupt lines seen on load
        self._load()

    def _load(self) -> None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        lines = raw.split(b"\n")
        torn = bool(lines and lines[-1])  # no newline after the last record: it was cut mid-write
        for number, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                self.messages.append(GroupMessage.from_record(json.loads(line)))
            except (ValueError, KeyError, TypeError):
                if not (torn and number == len(lines) - 1):
                    self.skipped += 1
                    log.warning("bus %s: line %d is not a message; skipped", self.path.name, number + 1)
        if torn:  # keep the file appendable: the next record must start on a line of its own
            with open(self.path, "ab") as out:
                out.write(b"\n")

    def post(self, sender: str, text: str, **fields: Any) -> GroupMessage:
        """Append one message (fsynced) with the next timestamp; returns it."""
        with self._lock:
            last = self.messages[-1].ts if self.messages else 0.0
            ts = max(float(self.clock()), last + 1e-6)  # strictly increasing, whatever the clock does
            given = fields.pop("id", None)
            message = GroupMessage(id=given or uuid.uuid4().hex, ts=ts, sender=sender, text=text, **fields)
            self._write(message)
            self.messages.append(message)
            return message

    def _write(self, message: GroupMessage) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(message.record(), ensure_ascii=False) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def after(self, message_id: str | None) -> list[GroupMessage]:
        if message_id is None:
            return list(self.messages)
        for index, message in enumerate(self.messages):
            if message.id == message_id:
                return self.messages[index + 1 :]
        return list(self.messages)  # an unknown cursor: everything (never silently nothing)

    def slice_for(self, actor: str, messages: Iterable[GroupMessage] | None = None) -> list[GroupMessage]:
        return [m for m in (self.messages if messages is None else messages) if m.visible_to(actor)]

    @property
    def last_id(self) -> str | None:
        return self.messages[-1].id if self.messages else None


def render_for(actor: str, messages: Sequence[GroupMessage]) -> str:
    """What `actor` is told of the conversation since it last ran: each message wrapped with its sender,
    never its own (those are in its transcript already)."""
    parts = []
    for message in messages:
        if message.sender == actor:
            continue
        if message.dispatch is not None:
            to = ",".join(message.to)
            parts.append(f'<dispatch from="{message.sender}" to="{to}">\n{message.dispatch}\n</dispatch>')
        elif message.text.strip():
            text = message.text
            sources = message.extra.get("untrusted") if isinstance(message.extra, dict) else None
            if sources:  # an answer written after reading outside text carries it: it arrives as data
                text = wrap(text, f"{message.sender}, after reading {', '.join(map(str, sources))}")
            parts.append(f'<msg from="{message.sender}">\n{text}\n</msg>')
    return "\n".join(parts)


def in_asked_order(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A history's records with the answers of members asked together in the order they were asked.

    The bus keeps each answer where it ended, so the first to finish came first; the person saw them in the
    order they were asked (each bubble opens as its ask starts), and a reload swapped them. One order for both.
    """
    out: list[dict[str, Any]] = []
    asked: list[str] = []
    answers: list[dict[str, Any]] = []

    def place(record: dict[str, Any]) -> int:
        if record["from"] == COMMANDER:
            return len(asked) + 1  # its empty Stop segment goes after the answers it was waiting for
        return asked.index(record["from"]) if record["from"] in asked else len(asked)

    def flush() -> None:
        out.extend(sorted(answers, key=place))
        answers.clear()

    for record in records:
        if record.get("dispatch"):
            flush()  # answers to earlier asks stay before a later ask
            asked.extend(record.get("to") or ())
            out.append(record)
        elif _stop_segment(record):
            # A Stop ends the commander's run at once: its empty segment can be written before the answers of
            # the members it stopped, and must not split them (the first to stop came first after a reload).
            answers.append(record)
        elif record["from"] in (USER, COMMANDER):
            flush()
            asked.clear()
            out.append(record)
        else:
            answers.append(record)
    flush()
    return out


def _stop_segment(record: dict[str, Any]) -> bool:
    """The commander's segment a Stop ended with nothing said: no bubble of its own, only "Stopped"."""
    return (
        record["from"] == COMMANDER
        and bool(record.get("stopped"))
        and not record.get("text")
        and not record.get("process")
        and not record.get("failure")
    )

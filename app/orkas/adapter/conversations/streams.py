"""Each conversation's event stream: numbered, kept for catch-up, pushed to every view.

Events are kept typed (`Published`: the event, its number, its actor) in memory and written to the
conversation's event log on disk (event_log.py) in their wire form, so a view that reconnects — even after a
restart — asks for "everything after N" and never sees a bubble twice. They become wire dicts only where they
leave: `subscribe` hands views (the window's socket, the phone's, `orkas run`) the one serialization of
wire.py. Alerts (an approval waiting or given, a turn ended) also go to every phone, whichever chat it has open.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orkas.adapter.conversations.event_log import EventLog
from orkas.adapter.wire import (
    ALERTS,
    HistoryChanged,
    Idle,
    PermissionAnswered,
    ProductEvent,
    StateChanged,
    TitleChanged,
    TurnEnd,
    UnknownEvent,
    UnsentDiscarded,
    UserMessageShown,
    from_wire,
    to_wire,
)
from orkas.engine.events import Done, PermissionRequest

log = logging.getLogger(__name__)
KEEP_EVENTS = 5000  # per conversation, in its log, for catch-up; older ones are in the transcript
FOLLOW_EVERY = 0.1  # seconds between looks at a watched log another process may be writing (a stat each)
Subscription = asyncio.Queue[dict[str, Any]]
# Said between runs (a message discarded, a title, an edit, the floor handed back): after one, no run is open.
BETWEEN_RUNS = (UnsentDiscarded, TitleChanged, HistoryChanged, StateChanged)


@dataclass(slots=True)
class Published:
    """One event of a conversation's stream, as it was published."""

    conversation: str
    seq: int
    event: ProductEvent
    actor: str | None = None
    _wire: dict[str, Any] | None = None

    def wire(self) -> dict[str, Any]:
        """Its wire form, made once (every view gets the same dict)."""
        if self._wire is None:
            self._wire = to_wire(self.conversation, self.seq, self.event, self.actor)
        return self._wire


@dataclass
class _Stream:
    """A conversation's stream. `events` are the newest of its log: all of them while a run goes on (or another
    process's is followed); none once this process's run is over — the views watching have them, one that comes back
    is read what it missed from the log, so a day of finished conversations holds no events in memory."""

    log: EventLog | None = None
    events: list[Published] = field(default_factory=list)
    next_seq: int = 1
    subscribers: set[Subscription] = field(default_factory=set)
    finished: int = 0  # turns ended in the log (the phone's unread count), counted as they end


class Streams:
    """`path(conversation)` says where a conversation's event log lives; `running(conversation)` whether a run is
    going in it (a running turn keeps all its events, for views that join late)."""

    def __init__(
        self,
        path: Callable[[str], Path],
        running: Callable[[str], bool],
        elsewhere: Callable[[str], bool] = lambda _: False,
    ) -> None:
        """`running`: a run goes in this process; `elsewhere`: in another one (the window, a terminal)."""
        self.path = path
        self.running = running
        self.elsewhere = elsewhere
        self.streams: dict[str, _Stream] = {}
        self.alerts: set[Subscription] = set()  # every conversation's alerts, for the phones' notifications
        self.observers: list[Callable[[str, Published], None]] = []  # told of every event (learning's watch)
        self._following: asyncio.Task[None] | None = None

    def stream(self, conversation_id: str) -> _Stream:
        """The conversation's stream, loaded from its event log the first time it is asked for."""
        stream = self.streams.get(conversation_id)
        if stream is not None and self._written_elsewhere(conversation_id, stream):
            return self._reload(conversation_id, stream)
        if stream is None:
            on_disk = EventLog(self.path(conversation_id), KEEP_EVENTS)
            stream = _Stream(log=on_disk)
            stream.events = [p for data in on_disk.load() if (p := _typed(conversation_id, data)) is not None]
            stream.next_seq = stream.events[-1].seq + 1 if stream.events else 1
            stream.finished = sum(_ends_turn(p) for p in stream.events)
            self.streams[conversation_id] = stream
            self._end_orphaned(conversation_id)  # the server stopped mid-run: the replay must end
            if not _run_open(stream.events):  # over: in the log for whoever missed it, not in memory
                stream.events.clear()
        return stream

    def _written_elsewhere(self, conversation_id: str, stream: _Stream) -> bool:
        return stream.log is not None and not self.running(conversation_id) and stream.log.written_elsewhere()

    def catch_up(self, conversation_id: str) -> None:
        """Send the views watching this conversation what another process (`orkas run --session`) has written to
        its log since: read as it is appended, a whole reload only when the log was rewritten under us. Events
        another process publishes are its own to learn from and to alert about: they only reach the views."""
        stream = self.streams.get(conversation_id)
        if stream is None or stream.log is None or not self._written_elsewhere(conversation_id, stream):
            return
        new = stream.log.read_new()
        if new is None:
            self._reload(conversation_id, stream)
            return
        for data in new:
            published = _typed(conversation_id, data)
            if published is None or published.seq < stream.next_seq:
                continue  # one this process already has
            stream.events.append(published)
            stream.next_seq = published.seq + 1
            stream.finished += _ends_turn(published)
            for queue in stream.subscribers:
                queue.put_nowait(published.wire())
        del stream.events[:-KEEP_EVENTS]

    def _end_orphaned(self, conversation_id: str) -> None:
        """A run that ended without its `idle` — this server's, stopped mid-run, or another process's, killed (views
        kept showing it running, with a Stop that did nothing) — is ended. Another process's last lines are read
        first: it writes them before letting go of the run."""
        stream = self.streams.get(conversation_id)
        if stream is None or not _run_open(stream.events):
            return
        if self.running(conversation_id) or self.elsewhere(conversation_id):
            return
        self.catch_up(conversation_id)
        if _run_open(stream.events):
            self.publish(conversation_id, Idle())

    def run_start(self, conversation_id: str) -> tuple[int, str]:
        """Where the run going on now began in the kept events: the sequence number before its first event,
        and the id of the message it answers ("" when not kept)."""
        events = self.stream(conversation_id).events
        start = next((i + 1 for i in range(len(events) - 1, -1, -1) if isinstance(events[i].event, Idle)), 0)
        if start >= len(events):
            return self.last_seq(conversation_id), ""
        first = events[start]
        message = first.event.message_id if isinstance(first.event, UserMessageShown) else ""
        return first.seq - 1, message

    def watched(self) -> list[str]:
        """The conversations some view is subscribed to."""
        return [conversation_id for conversation_id, stream in self.streams.items() if stream.subscribers]

    def _reload(self, conversation_id: str, old: _Stream) -> _Stream:
        """`orkas run` went on with this conversation in its own process: its events are read back, numbering goes
        on after them, and the views watching are sent what they missed."""
        if old.log is not None:
            old.log.close()
        del self.streams[conversation_id]
        last = old.next_seq - 1
        stream = self.stream(conversation_id)
        stream.subscribers |= old.subscribers
        for published in stream.events:
            if published.seq > last:
                for queue in stream.subscribers:
                    queue.put_nowait(published.wire())
        return stream

    def last_seq(self, conversation_id: str) -> int:
        return self.stream(conversation_id).next_seq - 1

    def publish(self, conversation_id: str, event: ProductEvent, actor: str | None = None) -> Published:
        stream = self.stream(conversation_id)
        published = Published(conversation_id, stream.next_seq, event, actor)
        stream.next_seq += 1
        for observe in self.observers:
            observe(conversation_id, published)
        stream.events.append(published)
        stream.finished += _ends_turn(published)
        if stream.log is not None:
            stream.log.append(published.wire())
        if not self.running(conversation_id):
            stream.events.clear()  # in the log: read from there by a view that missed them
            if stream.log is not None:
                stream.log.trim()
                stream.log.close()  # reopened by the next event: an idle conversation holds no file
        for queue in stream.subscribers:
            queue.put_nowait(published.wire())
        if isinstance(event, ALERTS):
            for queue in self.alerts:
                queue.put_nowait(published.wire())
        return published

    def subscribe(self, conversation_id: str, after: int = 0) -> tuple[list[dict[str, Any]], Subscription]:
        """Events after `after` so far (wire form), and a queue of the ones to come. Call `unsubscribe` when done."""
        stream = self.stream(conversation_id)
        queue: Subscription = asyncio.Queue()
        stream.subscribers.add(queue)
        if self._following is None or self._following.done():
            self._following = asyncio.get_running_loop().create_task(self._follow())
        return [p.wire() for p in self.history(conversation_id, after)], queue

    def history(self, conversation_id: str, after: int = 0) -> list[Published]:
        """The kept events after `after`: from memory when it holds them all, else from the log (a view that comes
        back to a finished run it saw only part of)."""
        return self._since(conversation_id, self.stream(conversation_id), after)

    def _since(self, conversation_id: str, stream: _Stream, after: int) -> list[Published]:
        first = stream.events[0].seq if stream.events else stream.next_seq
        if after + 1 >= first or stream.log is None:
            return [p for p in stream.events if p.seq > after]
        logged = [p for data in stream.log.load() if (p := _typed(conversation_id, data)) is not None]
        older = [p for p in logged if after < p.seq < first]
        return older + [p for p in stream.events if p.seq > after]

    async def _follow(self) -> None:
        """While views are subscribed, what another process writes to their conversations reaches them live."""
        while watched := self.watched():
            for conversation_id in watched:
                try:
                    self.catch_up(conversation_id)
                    self._end_orphaned(conversation_id)
                except Exception:  # one damaged log must not stop the others being followed
                    log.exception("cannot follow conversation %s", conversation_id)
            await asyncio.sleep(FOLLOW_EVERY)

    def unsubscribe(self, conversation_id: str, queue: Subscription) -> None:
        stream = self.streams.get(conversation_id)
        if stream is not None:
            stream.subscribers.discard(queue)

    def waiting_questions(self, conversations: list[str]) -> list[dict[str, Any]]:
        """Permission requests no one has answered yet in these conversations (a phone that connects is shown
        them at once)."""
        waiting = []
        for conversation_id in conversations:
            events = self.stream(conversation_id).events
            answered = {p.event.question_id for p in events if isinstance(p.event, PermissionAnswered)}
            waiting += [
                p.wire() for p in events if isinstance(p.event, PermissionRequest) and p.event.id not in answered
            ]
        return waiting

    def answer_given(self, conversation_id: str, question_id: str) -> PermissionAnswered | None:
        """The answer that closed this question (the first one given, an expiry, a Stop), while its events are kept."""
        kept = self.history(conversation_id)  # a late answer, after the run: its question is in the log
        answers = (p.event for p in kept if isinstance(p.event, PermissionAnswered))
        return next((answer for answer in answers if answer.question_id == question_id), None)

    def finished_turns(self, conversation_id: str) -> int:
        """How many turns have ended in this conversation's log (the phone's unread count)."""
        return self.stream(conversation_id).finished

    def forget(self, conversation_id: str) -> None:
        stream = self.streams.pop(conversation_id, None)
        if stream is not None and stream.log is not None:
            stream.log.close()

    def close(self) -> None:
        if self._following is not None:
            self._following.cancel()
        for stream in self.streams.values():
            if stream.log is not None:
                stream.log.close()


def _typed(conversation_id: str, data: dict[str, Any]) -> Published | None:
    try:
        _conversation, seq, event, actor = from_wire(data)
    except (UnknownEvent, KeyError, TypeError, ValueError) as e:  # a newer version's, or damaged: skipped
        log.warning("conversation %s: an event in its log was skipped (%s)", conversation_id, e)
        return None
    return Published(conversation_id, seq, event, actor, data)


def _ends_turn(published: Published) -> bool:
    """A group's turn ends once (TurnEnd); each of its actors' Done is part of it, not a turn of its own."""
    event = published.event
    return isinstance(event, TurnEnd) or (isinstance(event, Done) and published.actor is None)


def _run_open(events: list[Published]) -> bool:
    """A run began after the last `idle` (an event of a run, not one said between runs: a discarded message after
    an idle was taken for a run that never ended, and a second `idle` was sent)."""
    for published in reversed(events):
        if isinstance(published.event, Idle):
            return False
        if not isinstance(published.event, BETWEEN_RUNS):
            return True
    return False

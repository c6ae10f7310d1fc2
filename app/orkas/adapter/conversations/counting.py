"""Every run of a conversation counted for learning (self-evolution): from the person's message on, each event the
conversation publishes is seen by a `RunWatch` (learning/run_watch.py), per actor, and each run's signals are
recorded off the event loop when it ends. What the person does between runs (an edit, another answer) counts too.
Recording is the app's hook (`record`); without one nothing is counted."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from orkas.adapter.conversations.store import ConversationStore
from orkas.adapter.conversations.streams import Published
from orkas.core.errors import NotFound

if TYPE_CHECKING:  # learning's modules load when a run is counted: never while learning is off
    from orkas.adapter.learning.run_watch import RunWatch
    from orkas.engine.evolution.signals import RunSignals

log = logging.getLogger(__name__)
COMMANDER = "commander"


class Counting:
    def __init__(
        self,
        store: ConversationStore,
        record: Callable[[RunSignals], None] | None,
        advertised: Callable[[str, str], Sequence[str]] | None,
        pending: set[asyncio.Task[None]],
        learning: Callable[[], bool] = lambda: True,
    ) -> None:
        """`advertised(conversation, actor)`: the skills its prompt listed; `pending` keeps the recording tasks
        (the runtime waits for them before a command exits, and cancels them at shutdown); `learning()` says
        whether a run beginning now is counted at all."""
        self.store = store
        self.record = record
        self.advertised = advertised
        self.pending = pending
        self.learning = learning
        self.watching: dict[str, RunWatch] = {}

    def watch(self, conversation_id: str, person: str) -> None:
        """From now on every event this conversation publishes is counted, the person's words being `person`."""
        if self.record is None or not self.learning():
            return
        from orkas.adapter.learning.run_watch import RunWatch

        listed = self.advertised
        self.watching[conversation_id] = RunWatch(
            conversation_id,
            person,
            self._recorder(),
            (lambda actor: listed(conversation_id, actor)) if listed is not None else (lambda _actor: ()),
            addressed=re.findall(r"@([a-z0-9][a-z0-9_-]*)", person),
            default=self.bound(conversation_id),
        )

    def observe(self, conversation_id: str, published: Published) -> None:
        if (watch := self.watching.get(conversation_id)) is not None:
            watch.see(published.event, published.actor)

    def done(self, conversation_id: str) -> None:
        self.watching.pop(conversation_id, None)

    def between(self, conversation_id: str, *, edits: int = 0, another_answer: int = 0) -> None:
        """Something the person did outside a run (edited their message, asked for another answer)."""
        if self.record is not None and self.learning():
            from orkas.engine.evolution.signals import RunSignals

            signals = RunSignals(agent=self.bound(conversation_id), conversation=conversation_id, outcome="between")
            signals.edits, signals.another_answer = edits, another_answer
            self._recorder()(signals)

    def bound(self, conversation_id: str) -> str:
        """Who answers a one-agent conversation: the named agent it is bound to, else the commander."""
        try:
            return self.store.get(conversation_id).agent or COMMANDER
        except (NotFound, OSError):
            return COMMANDER

    def _recorder(self) -> Callable[[RunSignals], None]:
        assert self.record is not None
        record = self.record
        loop = asyncio.get_running_loop()

        def recorded(signals: RunSignals) -> None:
            task = loop.create_task(_record(record, signals))
            self.pending.add(task)  # a lost signal costs nothing, but a command waits for them before it exits
            task.add_done_callback(self.pending.discard)

        return recorded


async def _record(record: Callable[[RunSignals], None], signals: RunSignals) -> None:
    try:
        await asyncio.to_thread(record, signals)
    except Exception:  # learning is a convenience: it never breaks a conversation
        log.exception("recording a run's signals failed")

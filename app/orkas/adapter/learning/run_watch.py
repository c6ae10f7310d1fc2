"""A turn's runs, watched for self-evolution: one `Observer` per actor (the commander as `commander`), fed the
events the runtime publishes anyway; when an actor's run ends its signals go to `record` (off the event loop).
The person's words count as a possible correction only for the actor they reached directly (the commander,
or the agent they addressed); a member working on a dispatched task gets the commander's words, not theirs."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from orkas.engine.events import Done, Error
from orkas.engine.evolution.signals import Observer, RunSignals

log = logging.getLogger(__name__)

COMMANDER = "commander"


class RunWatch:
    def __init__(
        self,
        conversation: str,
        person: str,
        record: Callable[[RunSignals], None],
        advertised: Callable[[str], Sequence[str]] = lambda _actor: (),
        addressed: Sequence[str] = (),
        default: str = COMMANDER,
    ) -> None:
        """`default`: who answers events that carry no actor — the agent a conversation is bound to, else the
        commander."""
        self.conversation = conversation
        self.person = person
        self.record = record
        self.advertised = advertised
        self.default = default
        self.addressed = {default, *addressed}
        self.running: dict[str, Observer] = {}

    def see(self, event: Any, actor: str | None = None) -> None:
        """Must not raise: a failure here costs a signal, never a turn."""
        try:
            if getattr(event, "type", "") == "permission_answered":  # the person said no: a skip
                if getattr(event, "decision", "") == "deny" and self.running:
                    asked = self.running.get(actor or "") or next(reversed(self.running.values()))
                    asked.signals.skips += 1
                return
            name = actor or self.default
            if name not in self.running:  # its run_start, or the first event seen of it
                prompt = self.person if name in self.addressed else ""
                self.running[name] = Observer(name, self.conversation, prompt, list(self.advertised(name)))
            observer = self.running[name]
            observer.see(event)
            if isinstance(event, Done | Error):
                self.record(self.running.pop(name).finish())
        except Exception:
            log.exception("counting a run's signals failed")

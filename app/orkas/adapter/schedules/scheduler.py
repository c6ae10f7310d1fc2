"""Firing schedules while Orkas runs: the window, or `orkas serve [--background]`.

One process fires them — whichever holds `<data>/schedules.lock` (a second app open over the same data waits its
turn, so nothing fires twice). It wakes at the next schedule's time, and at least every `tick` seconds by the wall
clock: a machine that slept wakes to find the time past, and each schedule that fell due meanwhile runs once (not
once per missed slot); so does one that fell due while no Orkas ran, at the next start. A schedule whose conversation
is busy (its own previous run still going, or the person's) waits for it: a schedule never overlaps itself. Each run
is an ordinary turn of its conversation (`fire`), with that conversation's agents, model, permissions and budgets.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable

from orkas.adapter.schedules.store import Schedule, ScheduleStore, hold_runner
from orkas.core.errors import ConfigError, ConversationBusy, NotFound

log = logging.getLogger(__name__)
TICK = 15.0  # seconds: the longest the scheduler sleeps (a sleeping machine's clock jumps)
RETRY_LOCK = 5.0  # seconds between tries when another process fires schedules (it may have ended)
STARTED = "started"  # its turn began (how it went is in its chat)
BUSY_LOOK = 1.0  # seconds between looks at a busy conversation a schedule waits for


class Scheduler:
    def __init__(
        self,
        store: ScheduleStore,
        fire: Callable[[Schedule], Awaitable[None]],
        busy: Callable[[str], bool],
        *,
        tick: float = TICK,
        now: Callable[[], float] = time.time,
    ) -> None:
        """`fire` starts the schedule's turn (raising ConfigError when it cannot: no provider, a budget spent, the
        conversation gone); `busy` says whether a conversation's run goes on."""
        self.store = store
        self.fire = fire
        self.busy = busy
        self.tick = tick
        self.now = now
        self.lock: int | None = None
        self._poked: asyncio.Event | None = None

    async def run_forever(self) -> None:
        try:
            while True:
                if self.lock is None:
                    self.lock = await asyncio.to_thread(hold_runner, self.store)
                    if self.lock is None:
                        await asyncio.sleep(RETRY_LOCK)
                        continue
                    log.info("schedules fire in this process")
                try:
                    wait = await self.once()
                except ConfigError as e:  # an unreadable schedules file: said, and read again later
                    log.warning("schedules: %s", e)
                    wait = self.tick
                await self._sleep(wait)
        finally:
            self.release()

    async def once(self) -> float:
        """Fire what is due; the seconds until the next look."""
        waiting = False
        for schedule in await asyncio.to_thread(self.store.due):
            if self.busy(schedule.conversation):
                waiting = True  # its conversation is running: looked at again soon (once, however long it took)
                continue
            outcome = STARTED
            try:
                await self.fire(schedule)
                log.info("schedule %s fired in conversation %s", schedule.id, schedule.conversation)
            except ConversationBusy:
                waiting = True
                continue
            except NotFound:
                log.info("schedule %s removed: its conversation %s is gone", schedule.id, schedule.conversation)
                await asyncio.to_thread(self.store.forget_conversation, schedule.conversation)
                continue
            except ConfigError as e:
                outcome = f"not run: {e}"
                log.info("schedule %s could not run: %s", schedule.id, e)
            await asyncio.to_thread(self.store.fired, schedule.id, outcome)
        upcoming = [s.next for s in await asyncio.to_thread(self.store.load) if s.enabled and s.next is not None]
        soonest = min(upcoming, default=self.now() + self.tick) - self.now()
        return min(max(soonest, BUSY_LOOK if waiting else 0.05), self.tick)

    def poke(self) -> None:
        """A schedule was added or changed here: look now rather than at the next tick."""
        if self._poked is not None:
            self._poked.set()

    async def _sleep(self, seconds: float) -> None:
        self._poked = self._poked or asyncio.Event()
        try:
            await asyncio.wait_for(self._poked.wait(), seconds)
        except TimeoutError:
            pass
        self._poked.clear()

    def release(self) -> None:
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None

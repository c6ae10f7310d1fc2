"""Schedules on disk: `<data>/schedules.json`, each a conversation's prompt and when it runs.

Every change is a read-modify-write under a lock file, so `orkas schedule add` in a terminal and the running app's
scheduler never lose each other's writes; the file is replaced atomically, so a crash leaves the old or the new.
Who fires schedules holds `<data>/schedules.lock` (scheduler.py): one process at a time, whichever runs — the
window or `orkas serve --background` — and anyone can ask whether one does.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orkas.core.errors import ConfigError, NotFound
from orkas.core.fsutil import atomic_write

if TYPE_CHECKING:  # time zones and cron load when a schedule is made or fired, not with the app
    from orkas.adapter.schedules.when import When

log = logging.getLogger(__name__)
PROMPT_LIMIT = 8000  # characters
MAX_SCHEDULES = 200


@dataclass(frozen=True, slots=True)
class Schedule:
    id: str
    conversation: str
    prompt: str
    when: str  # as said
    timezone: str
    cron: str | None = None
    at: float | None = None  # a one-shot's moment
    next: float | None = None  # when it runs next (None: done, or off)
    enabled: bool = True
    created: float = 0.0
    last: dict[str, Any] = field(default_factory=dict)  # {"at": seconds, "outcome": "ran" | why it did not}

    @property
    def timing(self) -> When:
        from orkas.adapter.schedules.when import When

        return When(self.when, cron=self.cron, at=self.at)


def _from(data: dict[str, Any]) -> Schedule:
    known = {k: data[k] for k in Schedule.__dataclass_fields__ if k in data}
    return Schedule(**known)


class ScheduleStore:
    def __init__(self, folder: Path, now: Callable[[], float] = time.time) -> None:
        self.path = folder / "schedules.json"
        self.lock_path = folder / "schedules.json.lock"
        self.runner_lock = folder / "schedules.lock"
        self.now = now

    def load(self) -> list[Schedule]:
        try:
            data = json.loads(self.path.read_text())
            return [_from(s) for s in data["schedules"]]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ConfigError(f"{self.path} cannot be read ({type(e).__name__}): fix or remove it") from None

    def mtime(self) -> float:
        try:
            return self.path.stat().st_mtime
        except OSError:
            return 0.0

    @contextmanager
    def _changing(self) -> Iterator[list[Schedule]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            schedules = self.load()
            yield schedules
            body = json.dumps({"schedules": [asdict(s) for s in schedules]}, ensure_ascii=False, indent=1)
            atomic_write(self.path, (body + "\n").encode())

    def check(self, prompt: str, when: str, timezone: str | None = None) -> tuple[When, str, float]:
        """What `add` would keep — the time, the zone, the first run — or ConfigError with a sentence saying why not
        (asked before anything else is made for it, a new conversation included)."""
        from orkas.adapter.schedules.when import local_zone, next_time, parse

        if not prompt.strip() or len(prompt.strip()) > PROMPT_LIMIT:
            raise ConfigError(f"a schedule needs a prompt of 1 to {PROMPT_LIMIT} characters")
        tz = timezone or local_zone()
        now = self.now()
        timing = parse(when, tz, now)
        upcoming = next_time(timing, tz, now)
        if upcoming is None:
            raise ConfigError(f"{when!r} is in the past")
        return timing, tz, upcoming

    def add(self, conversation: str, prompt: str, when: str, timezone: str | None = None) -> Schedule:
        """A new schedule; ConfigError with a sentence when the prompt or the time is not one."""
        timing, tz, upcoming = self.check(prompt, when, timezone)
        prompt, now = prompt.strip(), self.now()
        made = Schedule(
            id=f"s-{secrets.token_hex(4)}", conversation=conversation, prompt=prompt, when=when.strip(), timezone=tz,
            cron=timing.cron, at=timing.at, next=upcoming, created=now,
        )  # fmt: skip
        with self._changing() as schedules:
            if len(schedules) >= MAX_SCHEDULES:
                raise ConfigError(f"at most {MAX_SCHEDULES} schedules: remove one first")
            schedules.append(made)
        log.info("schedule %s added for conversation %s (%s)", made.id, conversation, made.cron or "once")
        return made

    def get(self, schedule_id: str) -> Schedule:
        for schedule in self.load():
            if schedule.id == schedule_id:
                return schedule
        raise NotFound(f"no schedule {schedule_id!r}")

    def remove(self, schedule_id: str) -> Schedule:
        with self._changing() as schedules:
            for i, schedule in enumerate(schedules):
                if schedule.id == schedule_id:
                    del schedules[i]
                    return schedule
        raise NotFound(f"no schedule {schedule_id!r}")

    def set_enabled(self, schedule_id: str, enabled: bool) -> Schedule:
        """Turned off, it never runs; turned on again, it runs at its next time from now (nothing missed)."""
        from orkas.adapter.schedules.when import next_time

        return self._update(schedule_id, lambda s: replace(
            s, enabled=enabled, next=next_time(s.timing, s.timezone, self.now()) if enabled else s.next))  # fmt: skip

    def forget_conversation(self, conversation: str) -> list[Schedule]:
        """A deleted conversation's schedules go with it."""
        with self._changing() as schedules:
            gone = [s for s in schedules if s.conversation == conversation]
            schedules[:] = [s for s in schedules if s.conversation != conversation]
        return gone

    def fired(self, schedule_id: str, outcome: str) -> Schedule:
        """It ran (or could not): its next time is the first after now — slots missed while nothing ran (the
        machine asleep, the app closed) are not made up one by one: it ran once, for all of them."""
        from orkas.adapter.schedules.when import next_time

        now = self.now()

        def advance(s: Schedule) -> Schedule:
            upcoming = next_time(s.timing, s.timezone, now) if s.cron else None
            done = {"at": now, "outcome": outcome}
            return replace(s, next=upcoming, enabled=s.enabled and upcoming is not None, last=done)

        return self._update(schedule_id, advance)

    def _update(self, schedule_id: str, change: Callable[[Schedule], Schedule]) -> Schedule:
        with self._changing() as schedules:
            for i, schedule in enumerate(schedules):
                if schedule.id == schedule_id:
                    schedules[i] = change(schedule)
                    return schedules[i]
        raise NotFound(f"no schedule {schedule_id!r}")

    def due(self) -> list[Schedule]:
        now = self.now()
        return [s for s in self.load() if s.enabled and s.next is not None and s.next <= now]

    def runner(self) -> int | None:
        """The process that fires schedules now (its pid), or None when nothing does."""
        try:
            with open(self.runner_lock, "a+") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    lock.seek(0)
                    text = lock.read().strip()
                    return int(text) if text.isdigit() else -1
                fcntl.flock(lock, fcntl.LOCK_UN)
                return None
        except OSError:
            return None


def hold_runner(store: ScheduleStore) -> int | None:
    """Take the right to fire schedules: the lock's descriptor (held until the process ends or it is closed), or None
    when another process has it."""
    store.runner_lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(store.runner_lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd

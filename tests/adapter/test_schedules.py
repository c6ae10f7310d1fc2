"""Schedules: when they run (cron and words, time zones, summer time), kept on disk by several processes at once, and
fired once however many of their times were missed."""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from orkas.adapter.schedules.scheduler import Scheduler
from orkas.adapter.schedules.store import Schedule, ScheduleStore, hold_runner
from orkas.adapter.schedules.when import next_time, parse
from orkas.core.errors import ConfigError, NotFound

LISBON = "Europe/Lisbon"


def at(text: str, tz: str = LISBON) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(tz)).timestamp()


def local(moment: float | None, tz: str = LISBON) -> str:
    assert moment is not None
    return datetime.fromtimestamp(moment, ZoneInfo(tz)).strftime("%a %Y-%m-%d %H:%M")


@pytest.mark.parametrize(
    "said, after, first",
    [
        ("every weekday at 8:00", "2026-12-04 09:00", "Mon 2026-12-07 08:00"),  # Friday after 8: Monday
        ("every day at 18:30", "2026-12-06 18:30", "Mon 2026-12-07 18:30"),  # strictly after
        ("every monday at 9", "2026-12-06 10:00", "Mon 2026-12-07 09:00"),
        ("every weekend day at 10", "2026-12-07 10:00", "Sat 2026-12-12 10:00"),
        ("every 15 minutes", "2026-12-06 10:07", "Sun 2026-12-06 10:15"),
        ("every hour", "2026-12-06 10:07", "Sun 2026-12-06 11:00"),
        ("0 8 * * 1-5", "2026-12-05 12:00", "Mon 2026-12-07 08:00"),
        ("0 0 13 * 5", "2026-12-01 00:00", "Fri 2026-12-04 00:00"),  # cron: day 13 OR a Friday
        ("30 2 * * 7", "2026-12-01 00:00", "Sun 2026-12-06 02:30"),  # 7 is Sunday too
        ("0 12 29 2 *", "2026-03-01 00:00", "Tue 2028-02-29 12:00"),
        ("in 2 hours", "2026-12-06 10:00", "Sun 2026-12-06 12:00"),
        ("tomorrow at 9:00", "2026-12-06 23:30", "Mon 2026-12-07 09:00"),
        ("at 2026-12-25 07:00", "2026-12-06 10:00", "Fri 2026-12-25 07:00"),
    ],
)
def test_when_a_schedule_runs_next(said: str, after: str, first: str) -> None:
    now = at(after)
    assert local(next_time(parse(said, LISBON, now), LISBON, now)) == first


def test_eight_in_the_morning_stays_eight_across_summer_time() -> None:
    when = parse("every day at 8:00", LISBON, at("2026-03-27 12:00"))
    saturday = next_time(when, LISBON, at("2026-03-27 12:00"))
    sunday = next_time(when, LISBON, saturday)  # type: ignore[arg-type]
    assert local(saturday) == "Sat 2026-03-28 08:00" and local(sunday) == "Sun 2026-03-29 08:00"
    assert sunday - saturday == 23 * 3600  # type: ignore[operator]  # the clocks went forward that night
    tokyo = next_time(parse("every day at 8:00", "Asia/Tokyo", 0), "Asia/Tokyo", at("2026-12-06 00:00", "Asia/Tokyo"))
    assert local(tokyo, "Asia/Tokyo") == "Sun 2026-12-06 08:00"


@pytest.mark.parametrize(
    "said, why",
    [
        ("", "say when"),
        ("every blursday", "not a day of the week"),
        ("every day at 25:00", "not a time of day"),
        ("61 * * * *", "outside 0-59"),
        ("0 8 30 2 *", "never runs"),
        ("*/0 * * * *", "no step"),
        ("in 3 fortnights", "seconds, minutes, hours or days"),
        ("soonish", "not a time Orkas understands"),
        ("every 90 minutes", "1 to 59"),
        ("at 2027-02-29 08:00", "is not a moment: day is out of range"),
        ("in 99999999999 days", "within ten years"),
        ("at 9999-01-01 00:00", "within ten years"),
        ("in 3651 days", "within ten years"),
        ("in 2\nhours", "on one line"),
        ("every \u0663 minutes", "not a time Orkas understands|try every"),
        ("0 \u0668 * * *", "not a number"),
        ("at \uff12\uff10\uff12\uff17-01-01 08:00", "not a time Orkas understands"),
    ],
)
def test_what_is_not_a_time_is_said(said: str, why: str) -> None:
    with pytest.raises(ConfigError, match=why):
        when = parse(said, LISBON, at("2026-12-06 10:00"))
        next_time(when, LISBON, at("2026-12-06 10:00"))
    with pytest.raises(ConfigError, match="not a time zone"):
        parse("every day at 8", "Mars/Olympus", 0)


def test_when_clocks_go_back_a_line_of_every_few_minutes_runs_through_the_repeated_hour_and_a_set_time_once() -> None:
    york = "America/New_York"
    before = datetime(2027, 11, 7, 1, 50, tzinfo=ZoneInfo(york)).timestamp()  # the first 01:50 of that night
    every = parse("every 15 minutes", york, before)
    moments = [before]
    for _ in range(8):
        moments.append(next_time(every, york, moments[-1]))  # type: ignore[arg-type]
    gaps = {b - a for a, b in itertools.pairwise(moments[1:])}
    assert gaps == {900.0}  # a quarter of an hour each, through both 01:xx hours
    daily = parse("every day at 1:30", york, before)
    first = next_time(daily, york, before - 3600)
    assert next_time(daily, york, first) - first == 25 * 3600  # type: ignore[operator]  # once that night


def test_missed_times_run_once_and_a_one_shot_only_once(tmp_path: Path) -> None:
    clock = [at("2026-12-06 10:00")]
    store = ScheduleStore(tmp_path, now=lambda: clock[0])
    every = store.add("c1", "check the build", "every 15 minutes", LISBON)
    once = store.add("c1", "remind me", "in 1 hour", LISBON)
    assert store.due() == []
    clock[0] = at("2026-12-06 14:20")  # the machine slept four hours: 16 slots of the first missed
    assert {s.id for s in store.due()} == {every.id, once.id}
    ran = store.fired(every.id, "ran")
    assert local(ran.next) == "Sun 2026-12-06 14:30" and ran.last == {"at": clock[0], "outcome": "ran"}
    done = store.fired(once.id, "ran")
    assert done.next is None and not done.enabled
    assert store.due() == []
    with pytest.raises(ConfigError, match="in the past"):
        store.add("c1", "x", "at 2026-12-06 09:00", LISBON)
    off = store.set_enabled(every.id, False)
    clock[0] = at("2026-12-06 16:00")
    assert store.due() == [] and not off.enabled
    back = store.set_enabled(every.id, True)  # on again: from now, nothing made up
    assert local(back.next) == "Sun 2026-12-06 16:15"
    assert [s.id for s in store.forget_conversation("c1")] == [every.id, once.id] and store.load() == []


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    stores = [ScheduleStore(tmp_path) for _ in range(4)]
    threads = [
        threading.Thread(target=lambda s=s, i=i: [s.add(f"c{i}", f"p{n}", "every day at 8", LISBON) for n in range(10)])
        for i, s in enumerate(stores)
    ]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(ScheduleStore(tmp_path).load()) == 40


def test_one_process_fires_schedules_and_the_others_can_say_which(tmp_path: Path) -> None:
    store = ScheduleStore(tmp_path)
    assert store.runner() is None
    held = hold_runner(store)
    assert held is not None and hold_runner(ScheduleStore(tmp_path)) is None
    assert store.runner() == os.getpid()
    os.close(held)
    assert store.runner() is None


def test_the_scheduler_waits_for_a_busy_conversation_and_fires_each_due_schedule_once(tmp_path: Path) -> None:
    clock = [at("2026-12-06 10:00")]
    store = ScheduleStore(tmp_path, now=lambda: clock[0])
    every = store.add("busy", "check", "every 15 minutes", LISBON)
    gone = store.add("deleted", "x", "in 1 minute", LISBON)
    broke = store.add("broken", "y", "in 1 minute", LISBON)
    fired: list[str] = []
    busy = {"busy"}

    async def fire(schedule: Schedule) -> None:
        if schedule.conversation == "deleted":
            raise NotFound("no such conversation")
        if schedule.conversation == "broken":
            raise ConfigError("no provider is set up")
        fired.append(schedule.id)

    scheduler = Scheduler(store, fire, lambda c: c in busy, now=lambda: clock[0])
    clock[0] = at("2026-12-06 11:00")
    wait = asyncio.run(scheduler.once())
    assert fired == [] and wait == 1.0  # the busy one waits, looked at again in a second
    assert gone.id not in [s.id for s in store.load()]  # a deleted conversation's schedule goes with it
    assert store.get(broke.id).last["outcome"] == "not run: no provider is set up"
    busy.clear()
    clock[0] = at("2026-12-06 11:40")
    asyncio.run(scheduler.once())
    asyncio.run(scheduler.once())
    assert fired == [every.id]  # once for all it missed while busy
    assert local(store.get(every.id).next) == "Sun 2026-12-06 11:45"

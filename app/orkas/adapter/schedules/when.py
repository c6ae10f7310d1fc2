"""When a schedule runs: a cron line or a plain phrase, in the person's time zone.

    0 8 * * 1-5                      cron: minute hour day-of-month month day-of-week (0 or 7: Sunday)
    every weekday at 8:00            every day at 18:30 · every monday at 9 · every hour · every 15 minutes
    in 2 hours · in 30 minutes · in 45s
    at 2026-12-07 08:00 · tomorrow at 8:00 · today at 17:45

A repeating schedule is a cron line; a one-shot one is a moment. The next time after a given moment is computed in
the schedule's time zone (a local 08:00 stays 08:00 across a change of summer time; a local time that does not exist
that day runs at the same wall-clock time after the jump).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from orkas.core.errors import ConfigError

DAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
HORIZON_DAYS = 366 * 5  # a cron line that never fires within this (Feb 30) is refused
MAX_AHEAD = 3650 * 86400.0  # seconds: a one-shot further than this is a mistake
_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))
_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600, "d": 86400,
          "day": 86400}  # fmt: skip


@dataclass(frozen=True, slots=True)
class When:
    text: str  # as the person (or the model) said it
    cron: str | None = None  # repeating
    at: float | None = None  # once: seconds since the epoch

    def describe(self) -> str:
        return self.text


def local_zone() -> str:
    """This machine's time zone by its name (Europe/Lisbon), from /etc/localtime; UTC when it says none."""
    try:
        target = Path("/etc/localtime").resolve()
        name = str(target).split("zoneinfo/", 1)[1] if "zoneinfo/" in str(target) else ""
        if name:
            ZoneInfo(name)
            return name
    except (OSError, ZoneInfoNotFoundError, ValueError):
        pass
    try:
        name = Path("/etc/timezone").read_text().strip()
        ZoneInfo(name)
        return name
    except (OSError, ZoneInfoNotFoundError, ValueError):
        return "UTC"


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"{name!r} is not a time zone (like Europe/Lisbon or America/New_York)") from None


def parse(text: str, tz: str, now: float) -> When:
    """`text` as a schedule; ConfigError saying what is understood when it is not."""
    if any(not c.isprintable() for c in text):
        raise ConfigError("say when on one line, without control characters")
    said = " ".join(text.strip().lower().split())
    place = zone(tz)
    if not said:
        raise ConfigError("say when: a cron line (0 8 * * 1-5) or words (every weekday at 8:00, in 2 hours)")
    if found := re.fullmatch(r"in (\d+) ?([a-z]+)", said, re.ASCII):
        unit = _UNITS.get(found.group(2).rstrip("s") if len(found.group(2)) > 1 else found.group(2))
        if unit is None:
            raise ConfigError(f"{found.group(2)!r}: say seconds, minutes, hours or days")
        return When(text, at=_within(now, now + int(found.group(1)) * unit))
    if found := re.fullmatch(r"(?:at |on )?(\d{4}-\d{2}-\d{2})[ t](\d{1,2}):(\d{2})", said, re.ASCII):
        try:
            moment = datetime.fromisoformat(f"{found.group(1)} {int(found.group(2)):02d}:{found.group(3)}")
        except ValueError as e:
            raise ConfigError(f"{found.group(1)} {found.group(2)}:{found.group(3)} is not a moment: {e}") from None
        return When(text, at=_within(now, moment.replace(tzinfo=place).timestamp()))
    if found := re.fullmatch(r"(today|tomorrow) at (\d{1,2})(?::(\d{2}))?", said, re.ASCII):
        day = datetime.fromtimestamp(now, place).date() + timedelta(days=found.group(1) == "tomorrow")
        hour, minute = _clock(found.group(2), found.group(3))
        return When(text, at=datetime(day.year, day.month, day.day, hour, minute, tzinfo=place).timestamp())
    if said.startswith("every "):
        return When(text, cron=_every(said[6:]))
    fields = said.split()
    if len(fields) == 5:
        check_cron(said)
        return When(text, cron=said)
    raise ConfigError(
        f"{text!r} is not a time Orkas understands: try `every weekday at 8:00`, `every day at 18:30`, `in 2 hours`, "
        "`tomorrow at 9:00`, `at 2026-12-07 08:00` or a cron line (`0 8 * * 1-5`)"
    )


def _within(now: float, moment: float) -> float:
    if moment - now > MAX_AHEAD:
        raise ConfigError("a schedule runs within ten years from now")
    return moment


def _clock(hour: str, minute: str | None) -> tuple[int, int]:
    h, m = int(hour), int(minute or 0)
    if not (0 <= h <= 23 and 0 <= m <= 59):
        raise ConfigError(f"{hour}:{minute or '00'} is not a time of day")
    return h, m


def _every(rest: str) -> str:
    if found := re.fullmatch(r"(\d+) ?(minutes?|min|m)", rest, re.ASCII):
        step = int(found.group(1))
        if not 1 <= step <= 59:
            raise ConfigError("every N minutes: N from 1 to 59")
        return f"*/{step} * * * *"
    if rest in ("minute", "hour"):
        return "* * * * *" if rest == "minute" else "0 * * * *"
    found = re.fullmatch(r"(day|weekday|weekend day|[a-z]+day)(?: at (\d{1,2})(?::(\d{2}))?)?", rest, re.ASCII)
    if found is None:
        raise ConfigError(f"every {rest!r}: try every day at 18:30, every weekday at 8:00, every monday at 9")
    hour, minute = _clock(found.group(2) or "9", found.group(3))
    which = found.group(1)
    days = {"day": "*", "weekday": "1-5", "weekend day": "0,6"}.get(which)
    if days is None:
        if which not in DAYS:
            raise ConfigError(f"{which!r} is not a day of the week")
        days = str(DAYS.index(which))
    return f"{minute} {hour} * * {days}"


def _values(field: str, low: int, high: int, name: str) -> set[int]:
    found: set[int] = set()
    for part in field.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if re.fullmatch(r"[0-9]+", step_text) and int(step_text) > 0 else None
        if step_text and step is None:
            raise ConfigError(f"cron {name}: {part!r} has no step a number can be")
        if body == "*":
            start, end = low, high
        elif re.fullmatch(r"[0-9]+-[0-9]+", body):
            start, end = (int(x) for x in body.split("-"))
        elif re.fullmatch(r"[0-9]+", body):
            start = end = int(body)
            if step is not None:
                end = high
        else:
            raise ConfigError(f"cron {name}: {part!r} is not a number, a range or *")
        if not low <= start <= end <= high:
            raise ConfigError(f"cron {name}: {part!r} is outside {low}-{high}")
        found.update(range(start, end + 1, step or 1))
    return found


@dataclass(frozen=True, slots=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 Sunday … 6 Saturday
    any_day: bool  # day of month is *
    any_weekday: bool


def check_cron(line: str) -> Cron:
    fields = line.split()
    if len(fields) != 5:
        raise ConfigError(f"a cron line has 5 fields (minute hour day month weekday), not {len(fields)}")
    values = [_values(f, low, high, name) for f, (name, low, high) in zip(fields, _FIELDS, strict=True)]
    weekdays = frozenset(d % 7 for d in values[4])
    return Cron(frozenset(values[0]), frozenset(values[1]), frozenset(values[2]), frozenset(values[3]), weekdays,
                fields[2] == "*", fields[4] == "*")  # fmt: skip


def next_time(when: When, tz: str, after: float) -> float | None:
    """The first moment strictly after `after` when `when` runs (None: a one-shot already past)."""
    if when.at is not None:
        return when.at if when.at > after else None
    assert when.cron is not None
    cron = check_cron(when.cron)
    place = zone(tz)
    start = datetime.fromtimestamp(after, place)
    day = start.date()
    for _ in range(HORIZON_DAYS):
        weekday = (day.weekday() + 1) % 7  # Python: Monday 0; cron: Sunday 0
        by_date, by_weekday = day.day in cron.days, weekday in cron.weekdays
        # cron's rule: with both restricted, either matches; with one a *, the other decides
        if cron.any_day or cron.any_weekday:
            day_ok = by_date and by_weekday
        else:
            day_ok = by_date or by_weekday
        if day.month in cron.months and day_ok:
            # The hour repeated when clocks go back: a line that runs every hour (or more often) runs in both of its
            # copies, one at set hours once (cron's own rule); an hour skipped when they go forward runs after it.
            folds = (0, 1) if len(cron.hours) == 24 else (0,)
            moments = [
                datetime(day.year, day.month, day.day, hour, minute, fold=fold, tzinfo=place).timestamp()
                for hour in cron.hours
                for minute in cron.minutes
                for fold in folds
            ]
            later = [moment for moment in moments if moment > after]
            if later:
                return min(later)
        day += timedelta(days=1)
    raise ConfigError(f"the cron line {when.cron!r} never runs")

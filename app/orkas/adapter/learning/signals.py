"""The signals of every run, kept on this machine: `<data>/signals/YYYY-MM-DD.jsonl`, one JSON line per run of
a named agent (the commander as `commander`). Appends are one write each, without fsync: a signal lost to a
power cut costs nothing, and recording must stay far under a millisecond. A torn last line is skipped."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from datetime import date, datetime, timedelta
from pathlib import Path

from orkas.engine.evolution.signals import RunSignals

log = logging.getLogger(__name__)


class SignalLog:
    def __init__(self, folder: Path, clock: Callable[[], float] = time.time) -> None:
        self.folder = folder
        self.clock = clock

    def _file(self, day: date) -> Path:
        return self.folder / f"{day.isoformat()}.jsonl"

    def record(self, signals: RunSignals) -> None:
        line = json.dumps(signals.as_json(), ensure_ascii=False, separators=(",", ":")) + "\n"
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(
            self._file(datetime.fromtimestamp(signals.at).date()), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
        )
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    def since(self, when: float, agent: str | None = None) -> list[RunSignals]:
        """Every run recorded at or after `when` (of `agent`, when given), oldest first."""
        return [s for s in self._read(when) if s.at >= when and (agent is None or s.agent == agent)]

    def last_at(self, agent: str, lookback_days: int = 30) -> float | None:
        """When `agent` last ran (within the lookback), from the signals."""
        runs = self.since(self.clock() - lookback_days * 86_400, agent)
        return runs[-1].at if runs else None

    def _read(self, when: float) -> Iterator[RunSignals]:
        first = datetime.fromtimestamp(max(when, 0)).date() - timedelta(days=1)  # a record near midnight
        last = datetime.fromtimestamp(self.clock()).date() + timedelta(days=1)
        day = first
        while day <= last:
            path = self._file(day)
            day += timedelta(days=1)
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except FileNotFoundError:
                continue
            for line in lines:
                try:
                    yield RunSignals.from_json(json.loads(line))
                except (ValueError, TypeError, KeyError):
                    continue  # a torn or foreign line: never fatal


def learning_recorder(log: SignalLog, learning: Callable[[], bool]) -> Callable[[RunSignals], None]:
    """Record a run's signals only while learning is on (off until the person turns it on), and only a named
    agent's: the commander — the person's conversation with Orkas itself — never evolves, so its runs are not
    kept. Never raises: a lost signal costs nothing."""

    def record(signals: RunSignals) -> None:
        if signals.agent == "commander" or not learning():
            return
        try:
            log.record(signals)
        except OSError as e:
            logging.getLogger(__name__).warning("a run's signals were not recorded: %s", e.strerror or e)

    return record

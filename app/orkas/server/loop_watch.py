"""How long the server's event loop was held: every socket, every view and every run waits on it, so a stall is the
app freezing. A task asks to wake every `EVERY` seconds and counts how late it woke, in 1 ms buckets (memory that
stays the same after weeks); `GET /api/diagnostics/loop` reports the figures, and a stall of `WARN_AT` or more is
logged when it happens (the log is in the diagnostics bundle), so a freeze a person saw can be found afterwards."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

log = logging.getLogger(__name__)
EVERY = 0.02  # seconds between wake-ups
WARN_AT = 0.5  # seconds of stall that are logged
BUCKETS = 2001  # 0..1999 ms, and 2 s or more in the last


class LoopWatch:
    def __init__(self) -> None:
        self.counts = [0] * BUCKETS
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._watch(), name="loop-watch")

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def reset(self) -> None:
        """From now on (a benchmark's phase)."""
        self.counts = [0] * BUCKETS
        self.worst = 0.0

    async def _watch(self) -> None:
        while True:
            asked = time.perf_counter()
            await asyncio.sleep(EVERY)
            late = max(0.0, time.perf_counter() - asked - EVERY)
            self.counts[min(BUCKETS - 1, int(late * 1000))] += 1
            self.worst = max(self.worst, late)
            if late >= WARN_AT:
                log.warning("the event loop was held for %.0f ms", late * 1000)

    def summary(self) -> dict[str, Any]:
        """Wake-ups counted, how late they were (p50, p99, p99.9 in ms: the bucket's upper edge) and the worst."""
        total = sum(self.counts)
        return {
            "samples": total,
            "p50_ms": self._quantile(0.5, total),
            "p99_ms": self._quantile(0.99, total),
            "p999_ms": self._quantile(0.999, total),
            "max_ms": round(self.worst * 1000, 1),
            "held_over_warn": sum(self.counts[int(WARN_AT * 1000) :]),
        }

    def _quantile(self, q: float, total: int) -> int | None:
        if not total:
            return None
        seen = 0
        for bucket, count in enumerate(self.counts):
            seen += count
            if seen >= q * total:
                return bucket + 1
        return BUCKETS

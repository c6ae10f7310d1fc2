"""What the model calls used and cost: a ledger in `<data>/usage.jsonl`, and budgets that stop new calls.

One record per call (time, day, conversation, provider, model, tokens, cost). Totals per
conversation and per day are read from it once and then kept up to date in memory.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from orkas.core.fsutil import append_durably
from orkas.engine.messages import Usage


@dataclass(slots=True)
class Totals:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0
    unpriced_calls: int = 0  # calls whose model has no known price
    partial_calls: int = 0  # calls that ended before the provider's final count: the totals are at least these
    side_calls: int = 0  # calls no answer shows (a chat's title, a reranking of what a search found): in the totals
    side_cost: float = 0.0

    def add(self, record: dict[str, object]) -> None:
        self.calls += 1
        self.partial_calls += bool(record.get("partial"))
        self.input_tokens += int(record.get("input", 0))  # type: ignore[call-overload]
        self.output_tokens += int(record.get("output", 0))  # type: ignore[call-overload]
        self.cache_read_tokens += int(record.get("cache_read", 0))  # type: ignore[call-overload]
        self.cache_write_tokens += int(record.get("cache_write", 0))  # type: ignore[call-overload]
        cost = record.get("cost")
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost += float(cost)  # type: ignore[arg-type]
        if record.get("purpose"):
            self.side_calls += 1
            self.side_cost += float(cost or 0)  # type: ignore[arg-type]


def today(clock: Callable[[], float] = time.time) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(clock()))


@dataclass
class UsageLedger:
    path: Path
    clock: Callable[[], float] = time.time
    by_day: dict[str, Totals] = field(default_factory=dict)
    by_conversation: dict[str, Totals] = field(default_factory=dict)
    by_day_model: dict[tuple[str, str], Totals] = field(default_factory=dict)  # for the usage view
    _offset: int = 0  # how much of the file is counted; other processes (a terminal's run) append too

    def load(self) -> None:
        """Counts what was appended since the last look, by this process or another one: the window's Usage
        and a daily budget include what `orkas run` in a terminal spent (they counted only their own calls)."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size < self._offset:  # the file was replaced: count it again
            self.by_day, self.by_conversation, self.by_day_model, self._offset = {}, {}, {}, 0
        if size == self._offset:
            return
        with self.path.open("rb") as f:
            f.seek(self._offset)
            data = f.read(size - self._offset)
        complete = data[: data.rfind(b"\n") + 1]  # a line still being written is counted on a later look
        self._offset += len(complete)
        for line in complete.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn line after a crash: skip it
            if isinstance(record, dict):
                self._count(record)

    def _count(self, record: dict[str, object]) -> None:
        self.by_day.setdefault(str(record.get("day")), Totals()).add(record)
        self.by_conversation.setdefault(str(record.get("conversation")), Totals()).add(record)
        model = f"{record.get('provider')}/{record.get('model')}"
        self.by_day_model.setdefault((str(record.get("day")), model), Totals()).add(record)

    def record(
        self,
        *,
        conversation: str,
        provider: str,
        model: str,
        usage: Usage,
        cost: float | None,
        partial: bool = False,
        purpose: str = "",
    ) -> None:
        """`partial`: the call ended before the provider's final count; its figures are what was counted by then.
        `purpose`: a call no answer shows (a title, a reranking), said apart in the chat's total."""
        record: dict[str, object] = {
            "ts": round(self.clock(), 3),
            "day": today(self.clock),
            "conversation": conversation,
            "provider": provider,
            "model": model,
            "input": usage.input_tokens,
            "output": usage.output_tokens,
            "cache_read": usage.cache_read_tokens,
            "cache_write": usage.cache_write_tokens,
            "cost": None if cost is None else round(cost, 6),
        }
        if partial:
            record["partial"] = True
        if purpose:
            record["purpose"] = purpose
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Once per model call, on the event loop: written, not synced (an fsync there was ~6% of the server's loop time
        # in the soak); an app crash loses nothing, a machine failing may lose the last calls' lines.
        append_durably(self.path, (json.dumps(record) + "\n").encode(), sync=False)
        self.load()  # counts this record, and any another process appended before it

    def day(self, day: str | None = None) -> Totals:
        self.load()
        return self.by_day.get(day or today(self.clock), Totals())

    def chats_over(self, limit: float, among: Iterable[str]) -> list[tuple[str, float]]:
        """The conversations (of `among`: a deleted one is no longer the person's concern) that have spent `limit` or
        more, most first: a per-conversation limit saved below them stops their next message."""
        self.load()
        spent = [(c, self.by_conversation[c].cost) for c in among if c in self.by_conversation]
        return sorted(((c, cost) for c, cost in spent if cost >= limit), key=lambda item: -item[1])

    def month_cost(self, month: str | None = None) -> float:
        """What the calendar month ("YYYY-MM"; this one by default) cost so far."""
        return sum(totals.cost for totals in self._month(month))

    def month_partial(self, month: str | None = None) -> bool:
        """A call this month ended before its final count: the month's figure is at least that (as today's)."""
        return any(totals.partial_calls for totals in self._month(month))

    def _month(self, month: str | None) -> list[Totals]:
        self.load()
        prefix = (month or today(self.clock)[:7]) + "-"
        return [totals for day, totals in self.by_day.items() if day.startswith(prefix)]

    def conversation(self, conversation: str) -> Totals:
        self.load()
        return self.by_conversation.get(conversation, Totals())

    def summary(self, days: int = 30) -> dict[str, object]:
        """The last `days` days (today included, days without calls as zeros) and each model's share of
        them: what Settings → Usage draws."""
        self.load()
        now = self.clock()
        window = [time.strftime("%Y-%m-%d", time.localtime(now - back * 86400)) for back in range(days - 1, -1, -1)]
        per_model: dict[str, Totals] = {}
        for (day, model), totals in self.by_day_model.items():
            if day in window:
                merged = per_model.setdefault(model, Totals())
                for name in ("calls", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
                    setattr(merged, name, getattr(merged, name) + getattr(totals, name))
                merged.cost += totals.cost
                merged.unpriced_calls += totals.unpriced_calls
        total = Totals()
        for day in window:
            found = self.by_day.get(day, Totals())
            total.calls += found.calls
            total.input_tokens += found.input_tokens
            total.output_tokens += found.output_tokens
            total.cost += found.cost
        return {
            "days": [{"day": day, **asdict(self.by_day.get(day, Totals()))} for day in window],
            "models": [
                {"model": model, **asdict(totals)}
                for model, totals in sorted(
                    per_model.items(), key=lambda item: (-item[1].cost, -item[1].input_tokens - item[1].output_tokens)
                )
            ],
            "total": asdict(total),
        }


@dataclass
class LedgerBudget:
    """Budgets per conversation, per day and per calendar month, in US dollars; None means no limit."""

    ledger: UsageLedger
    conversation: str
    per_conversation: float | None = None
    per_day: float | None = None
    per_month: float | None = None

    def reached(self) -> dict[str, float]:
        """The limits already reached, each with what was spent against it: a new model call is refused while any
        is (`blocked`). Settings → Usage says so as a limit is saved below what was already spent."""
        checks: dict[str, tuple[float | None, Callable[[], float]]] = {
            "per_day": (self.per_day, lambda: self.ledger.day().cost),
            "per_month": (self.per_month, self.ledger.month_cost),
            "per_conversation": (self.per_conversation, lambda: self.ledger.conversation(self.conversation).cost),
        }
        reached = {}
        for name, (limit, spent) in checks.items():
            if limit is not None and (cost := spent()) >= limit:  # a limit not set costs no look at the ledger
                reached[name] = cost
        return reached

    def limit_reached(self) -> str | None:
        return next(iter(self.reached()), None)  # in the order `blocked` names them

    def blocked(self) -> str | None:
        return self.describe(self.reached())

    def describe(self, reached: dict[str, float]) -> str | None:
        """The first of these reached limits, in a sentence that says what to do."""
        if "per_day" in reached:
            return (
                f"the daily budget of {dollars(self.per_day or 0)} is reached ({dollars(reached['per_day'])} spent "
                "today); raise it with `orkas budget --day …` or continue tomorrow"
            )
        if "per_month" in reached:
            return (
                f"the monthly budget of {dollars(self.per_month or 0)} is reached ({dollars(reached['per_month'])} "
                "spent this month); raise it with `orkas budget --month …` or continue next month"
            )
        if "per_conversation" in reached:
            return (
                f"this conversation's budget of {dollars(self.per_conversation or 0)} is reached "
                f"({dollars(reached['per_conversation'])} spent); raise it with `orkas budget --conversation …` or "
                "start a new conversation"
            )
        return None

    def record(
        self, *, provider: str, model: str, usage: Usage, cost: float | None, partial: bool = False, purpose: str = ""
    ) -> None:
        self.ledger.record(
            conversation=self.conversation,
            provider=provider,
            model=model,
            usage=usage,
            cost=cost,
            partial=partial,
            purpose=purpose,
        )


def dollars(amount: float) -> str:
    """An amount as a person reads it: cents from a cent up; a smaller one in full ($0.0005, $0.0000001), never
    rounded to a $0.00 that reads as nothing spent or no limit."""
    if amount >= 0.01 or amount == 0:
        return f"${amount:,.2f}"
    return "$" + f"{amount:.10f}".rstrip("0").rstrip(".")

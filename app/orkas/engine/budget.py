"""Spending limits, checked before every model call.

The engine only asks two questions of a `Budget`: may a new call start, and what did the last one
cost. Where the money is counted (a ledger per conversation and per day) is the product's business.
"""

from __future__ import annotations

from typing import Protocol

from orkas.engine.messages import Usage


class Budget(Protocol):
    def blocked(self) -> str | None:
        """Why no new model call may start (one sentence for a person), or None."""
        ...

    def limit_reached(self) -> str | None:
        """Which limit stops new calls ("per_day", "per_month", "per_conversation"), or None: a view words it in the
        person's language and points at that limit."""
        ...

    def record(
        self, *, provider: str, model: str, usage: Usage, cost: float | None, partial: bool = False, purpose: str = ""
    ) -> None:
        """Count one call. `cost` is None when the model's price is unknown; `partial`: the call ended before the
        provider's final count (a Stop, a cut stream), and `usage` is what it had counted — at least that was spent.
        `purpose`: a call that answers nobody ("title", "rerank"), counted in the chat's total but on no answer."""
        ...

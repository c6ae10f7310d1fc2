"""How each learned skill is doing, from the signals of a window (7 days by default):

    invocation rate   reads / times advertised (in the prompt's index)
    edit-after rate   (corrections + the person's edits) / invocations, in the runs that read it
    ineffective rate  runs with a real error / invocations (transient errors and the person's stops excluded)

Health: insufficient data (advertised fewer than 5 times, or read fewer than 3 when there is something to
judge), underused (read in under 10% of the runs that offered it), ineffective (a real error in half the
runs that read it or more), needs review (corrected or edited after a third of its reads or more), healthy.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from orkas.engine.evolution.signals import RunSignals

WINDOW = 7 * 86_400
Health = Literal["healthy", "underused", "needs_review", "ineffective", "insufficient_data"]


@dataclass(frozen=True, slots=True)
class SkillMetrics:
    name: str
    advertised: int
    invoked: int
    corrected: int
    ineffective: int

    @property
    def invocation_rate(self) -> float:
        return self.invoked / self.advertised if self.advertised else 0.0

    @property
    def edit_after_rate(self) -> float:
        return self.corrected / self.invoked if self.invoked else 0.0

    @property
    def ineffective_rate(self) -> float:
        return self.ineffective / self.invoked if self.invoked else 0.0

    @property
    def health(self) -> Health:
        if self.advertised < 5:
            return "insufficient_data"
        if self.invocation_rate < 0.1:
            return "underused"
        if self.invoked < 3:
            return "insufficient_data"
        if self.ineffective_rate >= 0.5:
            return "ineffective"
        if self.edit_after_rate >= 1 / 3:
            return "needs_review"
        return "healthy"

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(
            invocation_rate=round(self.invocation_rate, 3),
            edit_after_rate=round(self.edit_after_rate, 3),
            ineffective_rate=round(self.ineffective_rate, 3),
            health=self.health,
        )
        return data


def skill_metrics(names: Sequence[str], runs: Iterable[RunSignals]) -> dict[str, SkillMetrics]:
    counts = {name: [0, 0, 0, 0] for name in names}  # advertised, invoked, corrected, ineffective
    for run in runs:
        for name in run.skills_advertised:
            if name in counts:
                counts[name][0] += 1
        for name in run.skills_read:
            if name not in counts:
                continue
            counts[name][1] += 1
            if run.correction is not None or run.edits:
                counts[name][2] += 1
            if run.outcome != "stopped" and (run.real_errors or run.outcome == "error"):
                counts[name][3] += 1
    return {name: SkillMetrics(name, *values) for name, values in counts.items()}

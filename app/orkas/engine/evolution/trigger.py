"""Whether a run is worth reflecting on: a weighted sum of what happened in it, against a threshold (0.7).

    user correction          0.9   the person said the answer was wrong
    error recovery           0.8   real errors, then the run finished (0.3 when transient errors were mixed in)
    complexity               0.5   more than 8 tool calls
    known weakness hit       0.7   a real error in something the agent's memo says it stumbles on
    known weakness overcome  0.75  that same thing used without a real error
    skill ineffective        0.85  a skill was read and the run still failed or was corrected (0.3 mixed)

Transient errors never count, alone or together: a timeout says nothing about the agent, and learning from
one teaches the wrong lesson (avoid a good tool, rewrite a good skill). A stop by the person is not an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from orkas.engine.evolution.signals import RunSignals

THRESHOLD = 0.7
WEIGHTS = {
    "user_correction": 0.9,
    "error_recovery": 0.8,
    "error_recovery_mixed": 0.3,
    "complexity": 0.5,
    "weakness_hit": 0.7,
    "weakness_overcome": 0.75,
    "skill_ineffective": 0.85,
    "skill_ineffective_mixed": 0.3,
}
COMPLEX = 8  # tool calls beyond which a run is complex


@dataclass(frozen=True, slots=True)
class Trigger:
    score: float
    reasons: tuple[str, ...] = ()
    threshold: float = THRESHOLD

    @property
    def fires(self) -> bool:
        return self.score >= self.threshold - 1e-9


@dataclass(frozen=True, slots=True)
class Weakness:
    """Something the agent's memo says it stumbles on, as the names of tools (or words) that show it."""

    text: str
    tools: tuple[str, ...] = field(default_factory=tuple)


def score_run(run: RunSignals, weaknesses: Sequence[Weakness] = (), threshold: float = THRESHOLD) -> Trigger:
    reasons: list[str] = []
    total = 0.0

    def add(name: str, why: str) -> None:
        nonlocal total
        total += WEIGHTS[name]
        reasons.append(f"{name} ({why})")

    real, transient = run.real_errors, run.transient_errors
    mixed = bool(transient) or run.retries > 0 or run.outcome == "transient"
    if run.correction is not None:
        add("user_correction", f"“{run.correction[1]}”")
    if real and run.outcome == "done":
        tools = ", ".join(sorted({e.tool for e in real}))
        if mixed:
            add("error_recovery_mixed", f"recovered from {len(real)} errors in {tools}, with transient ones")
        else:
            add("error_recovery", f"recovered from {len(real)} errors in {tools}")
    if run.tool_calls > COMPLEX:
        add("complexity", f"{run.tool_calls} tool calls")
    for weakness in weaknesses:
        failed = [e for e in real if e.tool in weakness.tools]
        used = [t for t in weakness.tools if run.tools.get(t)]
        if failed:
            add("weakness_hit", weakness.text[:80])
        elif used and run.outcome == "done":
            add("weakness_overcome", weakness.text[:80])
    if run.skills_read and (real or run.correction is not None or run.outcome == "error"):
        which = ", ".join(run.skills_read)
        add("skill_ineffective_mixed" if mixed else "skill_ineffective", f"after reading {which}")
    return Trigger(round(total, 3), tuple(reasons), threshold)


def score_runs(
    runs: Iterable[RunSignals], weaknesses: Sequence[Weakness] = (), threshold: float = THRESHOLD
) -> Trigger:
    """The strongest run since the last reflection decides (one clear lesson is enough; ten quiet runs are not)."""
    best = Trigger(0.0, (), threshold)
    for run in runs:
        scored = score_run(run, weaknesses, threshold)
        if scored.score > best.score:
            best = scored
    return best

"""Self-evolution, the engine's part: signals counted from a run's events (signals.py), the weighted trigger
that decides whether a run is worth reflecting on (trigger.py). Nothing here knows the product's files: the
adapter records signals on disk, schedules reflection and binds storage."""

from orkas.engine.evolution.signals import Observer, RunSignals, ToolError, correction_in, is_transient
from orkas.engine.evolution.trigger import THRESHOLD, WEIGHTS, Trigger, Weakness, score_run, score_runs

__all__ = [
    "THRESHOLD",
    "WEIGHTS",
    "Observer",
    "RunSignals",
    "ToolError",
    "Trigger",
    "Weakness",
    "correction_in",
    "is_transient",
    "score_run",
    "score_runs",
]

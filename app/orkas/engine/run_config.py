"""How a run behaves: the settings `Agent`, `Turn` and `ModelCall` share. A leaf module (it imports
nothing of the run loop), so the three can name it without importing one another."""

from __future__ import annotations

from dataclasses import dataclass, field

from orkas.engine.loop_guard import STOP_AT, WARN_AT
from orkas.engine.providers.base import Reasoning
from orkas.engine.retry import RetryPolicy

MAX_PARALLEL = 8  # read-only tool calls of one response run at once, up to this many


@dataclass(frozen=True, slots=True, kw_only=True)
class RunConfig:
    model: str
    max_tool_loops: int = 100
    max_tokens: int | None = None  # default: the model's full output limit
    context_window: int | None = None  # override the model catalogue
    temperature: float | None = None
    reasoning: Reasoning = "off"
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_parallel_tools: int = MAX_PARALLEL
    loop_warn_at: int = WARN_AT
    loop_stop_at: int = STOP_AT

    def __post_init__(self) -> None:
        if self.max_tool_loops < 1:
            raise ValueError(f"max_tool_loops must be at least 1, got {self.max_tool_loops!r}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens!r}")
        if self.context_window is not None and self.context_window < 1024:
            raise ValueError(f"context_window must be at least 1024 tokens, got {self.context_window!r}")

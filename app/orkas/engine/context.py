"""How full the context window is, measured as cheaply and as honestly as we can.

`ContextBudget` turns a model's limits into the numbers compaction works with. `ContextMeter`
estimates the next request: when the provider reported usage for the previous call, it takes that
exact figure and adds estimates only for what was appended since; otherwise it estimates the
whole request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from orkas.engine.catalog import ModelInfo
from orkas.engine.messages import Message, Usage
from orkas.engine.tokens import estimate_messages

MARGIN = 2048  # room for what estimates miss: message framing, tool-call syntax, the next user line


@dataclass(frozen=True, slots=True)
class ContextBudget:
    window: int
    max_output: int
    trigger_ratio: float = 0.8
    target_ratio: float = 0.5
    keep_ratio: float = 0.25

    @classmethod
    def for_model(cls, info: ModelInfo) -> ContextBudget:
        return cls(window=info.context_window, max_output=info.max_output)

    @property
    def usable(self) -> int:
        """What the prompt may use: the window minus the reply's room minus a margin."""
        return max(1024, self.window - self.max_output - MARGIN)

    @property
    def trigger(self) -> int:
        return int(self.usable * self.trigger_ratio)

    @property
    def target(self) -> int:
        """Compaction aims below this, so it does not fire again on the next call."""
        return int(self.usable * self.target_ratio)

    @property
    def keep(self) -> int:
        """The most recent messages kept verbatim take at most this much."""
        return int(self.usable * self.keep_ratio)


class ContextMeter:
    def __init__(self) -> None:
        self._reported: int | None = None  # prompt tokens the provider reported for the last call
        self._sent = 0  # how many history entries that call sent

    def observe(self, usage: Usage, sent: int) -> None:
        """Record what the provider counted for a request built from `sent` history entries."""
        if usage.prompt_tokens > 0:
            self._reported, self._sent = usage.prompt_tokens, sent

    def reset(self) -> None:
        """After the history was rewritten the last report no longer describes it."""
        self._reported = None
        self._sent = 0

    def estimate(self, fixed: int, history: Sequence[Message]) -> int:
        """Tokens of the next request: `fixed` (system prompt and tool definitions) plus history."""
        if self._reported is not None and self._sent <= len(history):
            return self._reported + estimate_messages(history[self._sent :])
        return fixed + estimate_messages(history)

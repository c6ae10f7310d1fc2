"""What we know of each model: context window, output limit, images, thinking, and price.

Patterns are matched against the bare model id, longest first. Unknown models get a conservative
default; the user can override any field (settings, or `--context-window` on the CLI).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from orkas.engine.messages import Usage


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0

    def cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / 1_000_000


FREE = Price(0.0, 0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelInfo:
    context_window: int
    max_output: int
    images: bool = True
    thinking: bool = False
    price: Price | None = None  # None: unknown, so cost is reported as unknown rather than guessed

    def __post_init__(self) -> None:
        if self.context_window < 1024 or not 1 <= self.max_output < self.context_window:
            raise ValueError(f"implausible model limits: {self!r}")


DEFAULT = ModelInfo(context_window=128_000, max_output=8_192)

_OPUS = Price(15.0, 75.0, 1.5, 18.75)
_SONNET = Price(3.0, 15.0, 0.3, 3.75)
_HAIKU = Price(1.0, 5.0, 0.1, 1.25)

_KNOWN: tuple[tuple[str, ModelInfo], ...] = (
    (r"claude-opus-4", ModelInfo(context_window=200_000, max_output=32_000, thinking=True, price=_OPUS)),
    (r"claude-sonnet-4", ModelInfo(context_window=200_000, max_output=32_000, thinking=True, price=_SONNET)),
    (r"claude-haiku-4", ModelInfo(context_window=200_000, max_output=32_000, thinking=True, price=_HAIKU)),
    (r"claude-3-7", ModelInfo(context_window=200_000, max_output=32_000, thinking=True, price=_SONNET)),
    (r"claude-3", ModelInfo(context_window=200_000, max_output=8_192, price=_SONNET)),
    (r"claude", ModelInfo(context_window=200_000, max_output=32_000, thinking=True)),
    (r"gpt-5-mini", ModelInfo(context_window=400_000, max_output=32_000, thinking=True, price=Price(0.25, 2.0, 0.025))),
    (r"gpt-5", ModelInfo(context_window=400_000, max_output=32_000, thinking=True, price=Price(1.25, 10.0, 0.125))),
    (r"gpt-4\.1", ModelInfo(context_window=1_000_000, max_output=32_768, price=Price(2.0, 8.0, 0.5))),
    (r"gpt-4o", ModelInfo(context_window=128_000, max_output=16_384, price=Price(2.5, 10.0, 1.25))),
    (r"o4-mini", ModelInfo(context_window=200_000, max_output=32_000, thinking=True, price=Price(1.1, 4.4, 0.275))),
    (r"o[13]", ModelInfo(context_window=200_000, max_output=32_000, thinking=True, price=Price(2.0, 8.0, 0.5))),
    (
        r"deepseek-reasoner",
        ModelInfo(
            context_window=128_000, max_output=32_000, images=False, thinking=True, price=Price(0.55, 2.19, 0.14)
        ),
    ),
    (r"deepseek", ModelInfo(context_window=128_000, max_output=8_192, images=False, price=Price(0.27, 1.10, 0.07))),
    (
        r"gemini-(2\.5|3)",
        ModelInfo(context_window=1_000_000, max_output=32_000, thinking=True, price=Price(1.25, 10.0, 0.31)),
    ),
    (r"qwen3", ModelInfo(context_window=128_000, max_output=8_192, images=False, thinking=True)),
    (r"llama-?3", ModelInfo(context_window=128_000, max_output=4_096, images=False)),
)
_PATTERNS = tuple((re.compile(p, re.IGNORECASE), info) for p, info in _KNOWN)


def lookup(
    model: str, *, context_window: int | None = None, max_output: int | None = None, local: bool = False
) -> ModelInfo:
    """The model's limits and price, with the user's overrides applied. `local`: served on this
    machine (Ollama, LM Studio …), so it costs nothing."""
    bare = model.rsplit("/", 1)[-1]
    info = next((i for pattern, i in _PATTERNS if pattern.match(bare)), DEFAULT)
    if local:
        info = replace(info, price=FREE)
    if context_window is not None:
        info = replace(info, context_window=context_window, max_output=min(info.max_output, context_window // 4))
    if max_output is not None:
        info = replace(info, max_output=max_output)
    return info

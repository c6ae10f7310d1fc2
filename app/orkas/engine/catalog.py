"""What we know of each model: context window, output limit, and whether it takes images and thinks.

Patterns are matched against the bare model id, longest first. Unknown models get a conservative
default; the user can override any field (settings, or `--context-window` on the CLI).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelInfo:
    context_window: int
    max_output: int
    images: bool = True
    thinking: bool = False

    def __post_init__(self) -> None:
        if self.context_window < 1024 or not 1 <= self.max_output < self.context_window:
            raise ValueError(f"implausible model limits: {self!r}")


DEFAULT = ModelInfo(context_window=128_000, max_output=8_192)

_KNOWN: tuple[tuple[str, ModelInfo], ...] = (
    (r"claude-(opus|sonnet)-4", ModelInfo(context_window=200_000, max_output=32_000, thinking=True)),
    (r"claude-haiku-4", ModelInfo(context_window=200_000, max_output=32_000, thinking=True)),
    (r"claude-3-7", ModelInfo(context_window=200_000, max_output=32_000, thinking=True)),
    (r"claude-3", ModelInfo(context_window=200_000, max_output=8_192)),
    (r"claude", ModelInfo(context_window=200_000, max_output=32_000, thinking=True)),
    (r"gpt-5", ModelInfo(context_window=400_000, max_output=32_000, thinking=True)),
    (r"gpt-4\.1", ModelInfo(context_window=1_000_000, max_output=32_768)),
    (r"gpt-4o", ModelInfo(context_window=128_000, max_output=16_384)),
    (r"o[134](-mini)?", ModelInfo(context_window=200_000, max_output=32_000, thinking=True)),
    (r"deepseek-reasoner", ModelInfo(context_window=128_000, max_output=32_000, images=False, thinking=True)),
    (r"deepseek", ModelInfo(context_window=128_000, max_output=8_192, images=False)),
    (r"gemini-(2\.5|3)", ModelInfo(context_window=1_000_000, max_output=32_000, thinking=True)),
    (r"qwen3", ModelInfo(context_window=128_000, max_output=8_192, images=False, thinking=True)),
    (r"llama-?3", ModelInfo(context_window=128_000, max_output=4_096, images=False)),
)
_PATTERNS = tuple((re.compile(p, re.IGNORECASE), info) for p, info in _KNOWN)


def lookup(model: str, *, context_window: int | None = None, max_output: int | None = None) -> ModelInfo:
    """The model's limits, with the user's overrides applied."""
    bare = model.rsplit("/", 1)[-1]
    info = next((i for pattern, i in _PATTERNS if pattern.match(bare)), DEFAULT)
    if context_window is not None:
        info = replace(info, context_window=context_window, max_output=min(info.max_output, context_window // 4))
    if max_output is not None:
        info = replace(info, max_output=max_output)
    return info

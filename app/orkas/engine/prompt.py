"""The system prompt: a stable base, the tool list, and sections supplied by hooks.

Hooks (the skill index, pinned memory, …) are plain callables so the product can add sections
without the engine knowing what they are. A hook returning None or "" adds nothing. Sections keep
their order so the prompt prefix stays byte-stable across turns, which keeps provider caches warm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orkas.engine.providers.base import ToolDefinition
from orkas.engine.tools.untrusted import PROMPT as UNTRUSTED_PROMPT

BASE_PROMPT = (
    "You are Orkas, an AI agent working on the user's own computer. You can call tools to read and "
    "act on files in the workspace. Work step by step: call a tool when you need facts, read its "
    "result, and answer plainly when the task is done. If a tool fails, read the error and try a "
    "different approach instead of repeating the same call.\n\n" + UNTRUSTED_PROMPT
)

PromptHook = Callable[[], str | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemPrompt:
    base: str = BASE_PROMPT
    hooks: Sequence[PromptHook] = field(default_factory=tuple)

    def build(self, tools: Sequence[ToolDefinition], workspace: Path) -> str:
        parts = [self.base, f"Workspace: {workspace}"]
        if tools:
            listing = "\n".join(f"- {t.name}: {t.description.splitlines()[0]}" for t in tools)
            parts.append(f"Tools available:\n{listing}")
        for hook in self.hooks:
            section = hook()
            if section:
                parts.append(section.strip())
        return "\n\n".join(parts)

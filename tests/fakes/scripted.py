"""An in-process provider that plays a script, one step per model call.

A step is a list of items: stream chunks are yielded, a `ProviderError` is raised, a `Gate` is
awaited (so a test can act mid-stream). It fails loudly: a call with no step left, and steps left
over at `verify()`.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from orkas.core.errors import ProviderError
from orkas.engine.messages import AssistantMessage, ContentBlock, StopReason, TextBlock, ToolUseBlock, Usage
from orkas.engine.providers.base import (
    Capabilities,
    MessageEnd,
    ProviderRequest,
    StreamChunk,
    TextDeltaChunk,
    ToolCallChunk,
)

_ids = itertools.count(1)


@dataclass
class Gate:
    """Reached: set when the stream gets here. Opened: the stream waits for it."""

    reached: asyncio.Event = field(default_factory=asyncio.Event)
    opened: asyncio.Event = field(default_factory=asyncio.Event)


Item = StreamChunk | ProviderError | Gate
Step = Sequence[Item]


def end(
    *content: ContentBlock,
    stop: StopReason | None = None,
    usage: Usage | None = None,
    model: str = "scripted-model",
) -> MessageEnd:
    stop_reason: StopReason = stop or ("tool_use" if any(isinstance(b, ToolUseBlock) for b in content) else "end_turn")
    usage = usage or Usage(input_tokens=10, output_tokens=5)
    message = AssistantMessage(content=content, provider="scripted", model=model, stop_reason=stop_reason, usage=usage)
    return MessageEnd(message=message, stop_reason=stop_reason, usage=usage)


def text(value: str) -> Step:
    return [TextDeltaChunk(text=value), end(TextBlock(text=value))]


def tool_call(name: str, input: dict[str, Any], *, id: str | None = None, say: str = "") -> Step:
    return tool_calls([(name, input, id)], say=say)


def tool_calls(calls: Sequence[tuple[str, dict[str, Any], str | None]], *, say: str = "") -> Step:
    blocks: list[ContentBlock] = [TextBlock(text=say)] if say else []
    items: list[Item] = [TextDeltaChunk(text=say)] if say else []
    for name, input, call_id in calls:
        block = ToolUseBlock(id=call_id or f"call_{next(_ids)}", name=name, input=input)
        blocks.append(block)
        items.append(ToolCallChunk(id=block.id, name=name))
    items.append(end(*blocks))
    return items


class ScriptedProvider:
    def __init__(self, *steps: Step, capabilities: Capabilities | None = None, name: str = "scripted") -> None:
        self._steps = list(steps)
        self.requests: list[ProviderRequest] = []
        self.violations: list[str] = []
        self._name = name
        self._capabilities = capabilities or Capabilities()

    @property
    def name(self) -> str:
        return self._name

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    def add(self, *steps: Step) -> None:
        self._steps.extend(steps)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamChunk]:
        self.requests.append(request)
        if not self._steps:
            self.violations.append(f"unexpected model call #{len(self.requests)}")
            raise AssertionError(f"ScriptedProvider: unexpected model call #{len(self.requests)}")
        for item in self._steps.pop(0):
            if isinstance(item, ProviderError):
                raise item
            if isinstance(item, Gate):
                item.reached.set()
                await item.opened.wait()
                continue
            yield item

    async def validate_auth(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    def verify(self) -> None:
        problems = list(self.violations)
        if self._steps:
            problems.append(f"{len(self._steps)} scripted steps were never used")
        if problems:
            raise AssertionError("ScriptedProvider: " + "; ".join(problems))

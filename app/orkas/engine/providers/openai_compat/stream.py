"""OpenAI chat-completions SSE chunks → neutral stream chunks and the final message."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from orkas.engine.messages import (
    AssistantMessage,
    ContentBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from orkas.engine.providers.base import (
    MessageEnd,
    StreamChunk,
    TextDeltaChunk,
    ThinkingDeltaChunk,
    ToolCallChunk,
    parse_tool_input,
)

FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class _Call:
    __slots__ = ("arguments", "id", "name")

    def __init__(self, id: str, name: str) -> None:
        self.id = id
        self.name = name
        self.arguments: list[str] = []


class ChunkAssembler:
    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _Call] = {}
        self.finish: str | None = None
        self.usage = Usage()

    def feed(self, chunk: dict[str, Any]) -> Iterator[StreamChunk]:
        usage = chunk.get("usage")
        if usage:
            self._usage(usage)
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                self.reasoning.append(reasoning)
                yield ThinkingDeltaChunk(text=reasoning)
            content = delta.get("content")
            if content:
                self.text.append(content)
                yield TextDeltaChunk(text=content)
            for call in delta.get("tool_calls") or ():
                yield from self._tool_call(call)
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]

    def _tool_call(self, call: dict[str, Any]) -> Iterator[StreamChunk]:
        index = call.get("index", len(self.calls))
        function = call.get("function") or {}
        current = self.calls.get(index)
        if current is None:
            # Some local servers send no id; the pairing still needs a unique one.
            current = _Call(call.get("id") or f"call_{uuid.uuid4().hex[:24]}", function.get("name") or "")
            self.calls[index] = current
            yield ToolCallChunk(id=current.id, name=current.name)
        elif function.get("name") and not current.name:
            current.name = function["name"]
        if function.get("arguments"):
            current.arguments.append(function["arguments"])

    def _usage(self, usage: dict[str, Any]) -> None:
        details = usage.get("prompt_tokens_details") or {}
        cached = int(details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0)
        self.usage = Usage(
            # Normalized to Anthropic's meaning: input_tokens excludes what was read from the cache.
            input_tokens=max(0, int(usage.get("prompt_tokens") or 0) - cached),
            output_tokens=int(usage.get("completion_tokens") or 0),
            cache_read_tokens=cached,
        )

    def end(self) -> MessageEnd:
        content: list[ContentBlock] = []
        if self.reasoning:
            content.append(ThinkingBlock(text="".join(self.reasoning)))
        if self.text:
            content.append(TextBlock(text="".join(self.text)))
        for index in sorted(self.calls):
            call = self.calls[index]
            content.append(ToolUseBlock(id=call.id, name=call.name, input=parse_tool_input("".join(call.arguments))))
        stop = FINISH_REASONS.get(self.finish or "stop", "end_turn")
        if self.calls and stop == "end_turn":
            stop = "tool_use"  # several local servers report "stop" after tool calls
        message = AssistantMessage(
            content=tuple(content),
            provider=self.provider,
            model=self.model,
            stop_reason=stop,
            usage=self.usage,
        )
        return MessageEnd(message=message, stop_reason=stop, usage=self.usage)

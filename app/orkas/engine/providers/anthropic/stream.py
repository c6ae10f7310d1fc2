"""Anthropic Messages stream events (the decoded JSON of each SSE `data:` line) → neutral stream chunks and
the final message."""

from __future__ import annotations

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
    UsageChunk,
    parse_tool_input,
)

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "pause_turn",
    "model_context_window_exceeded": "max_tokens",
}


class _Block:
    __slots__ = ("data", "id", "kind", "name", "parts", "signature")

    def __init__(self, kind: str, *, id: str = "", name: str = "", data: str = "") -> None:
        self.kind = kind
        self.id = id
        self.name = name
        self.data = data
        self.parts: list[str] = []
        self.signature: str | None = None


class StreamAssembler:
    """Feed decoded stream events with `feed`; it yields chunks and, on message_stop, the `MessageEnd`."""

    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.blocks: dict[int, _Block] = {}
        self.done: list[ContentBlock] = []
        self.usage = Usage()
        self.stop_reason: StopReason = "end_turn"
        self.finished = False

    def feed(self, event: dict[str, Any]) -> Iterator[StreamChunk]:
        kind = event.get("type")
        if kind == "content_block_delta":
            yield from self._delta(event.get("index", 0), event.get("delta") or {})
        elif kind == "content_block_start":
            yield from self._start(event.get("index", 0), event.get("content_block") or {})
        elif kind == "content_block_stop":
            self._stop(event.get("index", 0))
        elif kind == "message_start":
            self._usage((event.get("message") or {}).get("usage"))
            if self.usage.counted:  # the input is paid for from here on, whatever becomes of the stream
                yield UsageChunk(usage=self.usage)
        elif kind == "message_delta":
            stop_reason = (event.get("delta") or {}).get("stop_reason")
            if stop_reason:
                self.stop_reason = STOP_REASONS.get(stop_reason, "end_turn")
            self._usage(event.get("usage"))
        elif kind == "message_stop":
            self.finished = True
            message = AssistantMessage(
                content=tuple(self.done),
                provider=self.provider,
                model=self.model,
                stop_reason=self.stop_reason,
                usage=self.usage,
            )
            yield MessageEnd(message=message, stop_reason=self.stop_reason, usage=self.usage)

    def _start(self, index: int, block: dict[str, Any]) -> Iterator[StreamChunk]:
        kind = block.get("type")
        if kind == "tool_use":
            id, name = str(block.get("id", "")), str(block.get("name", ""))
            self.blocks[index] = _Block("tool_use", id=id, name=name)
            yield ToolCallChunk(id=id, name=name)
        elif kind == "text":
            self.blocks[index] = _Block("text")
            if block.get("text"):
                self.blocks[index].parts.append(block["text"])
                yield TextDeltaChunk(text=block["text"])
        elif kind == "thinking":
            self.blocks[index] = _Block("thinking")
        elif kind == "redacted_thinking":
            self.blocks[index] = _Block("redacted_thinking", data=str(block.get("data", "")))
        # Server-side tool blocks and other future kinds are ignored: they need no action from us.

    def _delta(self, index: int, delta: dict[str, Any]) -> Iterator[StreamChunk]:
        block = self.blocks.get(index)
        if block is None:
            return
        kind = delta.get("type")
        if kind == "text_delta":
            block.parts.append(delta.get("text", ""))
            yield TextDeltaChunk(text=delta.get("text", ""))
        elif kind == "input_json_delta":
            block.parts.append(delta.get("partial_json", ""))
        elif kind == "thinking_delta":
            block.parts.append(delta.get("thinking", ""))
            yield ThinkingDeltaChunk(text=delta.get("thinking", ""))
        elif kind == "signature_delta":
            block.signature = (block.signature or "") + delta.get("signature", "")

    def _stop(self, index: int) -> None:
        block = self.blocks.pop(index, None)
        if block is None:
            return
        text = "".join(block.parts)
        if block.kind == "text":
            self.done.append(TextBlock(text=text))
        elif block.kind == "tool_use":
            self.done.append(ToolUseBlock(id=block.id, name=block.name, input=parse_tool_input(text)))
        elif block.kind == "thinking":
            self.done.append(ThinkingBlock(text=text, signature=block.signature))
        elif block.kind == "redacted_thinking":
            self.done.append(ThinkingBlock(text="", signature=block.data, redacted=True))

    def _usage(self, usage: dict[str, Any] | None) -> None:
        if not usage:
            return
        self.usage = Usage(
            input_tokens=usage.get("input_tokens") or self.usage.input_tokens,
            output_tokens=usage.get("output_tokens") or self.usage.output_tokens,
            cache_read_tokens=usage.get("cache_read_input_tokens") or self.usage.cache_read_tokens,
            cache_write_tokens=usage.get("cache_creation_input_tokens") or self.usage.cache_write_tokens,
        )

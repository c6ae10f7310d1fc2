"""Neutral request → Anthropic Messages API parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orkas.engine.messages import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    LLMMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from orkas.engine.providers.base import ProviderRequest

THINKING_BUDGET = {"low": 2048, "medium": 8192, "high": 24576}
# Cache breakpoints: the system prompt with the tools, and the latest message (so the next call reads
# everything up to it from the cache). Two of the four the API allows.
EPHEMERAL: dict[str, Any] = {"cache_control": {"type": "ephemeral"}}


def _mark_latest(messages: list[dict[str, Any]]) -> None:
    if messages and messages[-1]["content"]:
        last = messages[-1]["content"][-1]
        if last.get("type") not in ("thinking", "redacted_thinking"):
            messages[-1]["content"][-1] = {**last, **EPHEMERAL}


def build_params(request: ProviderRequest) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": [_message(m) for m in request.messages],
    }
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, **EPHEMERAL}]
    if request.tools:
        params["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)} for t in request.tools
        ]
        params["tools"][-1].update(EPHEMERAL)  # system + tools: one cached prefix, stable across turns
        if request.tool_choice == "none":
            params["tool_choice"] = {"type": "none"}
    _mark_latest(params["messages"])
    # No temperature: the Messages API this SDK speaks takes none (the SDK refuses the argument), so a
    # conversation's temperature applies to the providers that take one and is left out here.
    if request.reasoning != "off":
        budget = THINKING_BUDGET[request.reasoning]
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        # The API requires room for an answer beyond the thinking budget.
        params["max_tokens"] = max(request.max_tokens, budget + 1024)
    return params


def _message(message: LLMMessage) -> dict[str, Any]:
    blocks = [b for b in (_block(b) for b in message.content) if b is not None]
    if isinstance(message, AssistantMessage):
        return {"role": "assistant", "content": blocks}
    return {"role": "user", "content": blocks}


def _block(block: ContentBlock) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text} if block.text else None  # the API rejects empty text
    if isinstance(block, ImageBlock):
        return _image(block)
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}
    if isinstance(block, ToolResultBlock):
        return {
            "type": "tool_result",
            "tool_use_id": block.tool_use_id,
            "content": _result_content(block.content),
            "is_error": block.is_error,
        }
    if isinstance(block, ThinkingBlock):
        if block.redacted:
            return {"type": "redacted_thinking", "data": block.signature or ""}
        if not block.signature:
            return None  # unsigned reasoning cannot be replayed to Anthropic
        return {"type": "thinking", "thinking": block.text, "signature": block.signature}
    raise TypeError(f"unknown content block {block!r}")


def _image(block: ImageBlock) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.media_type, "data": block.data}}


def _result_content(parts: Sequence[TextBlock | ImageBlock]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ImageBlock):
            out.append(_image(part))
        elif part.text:
            out.append({"type": "text", "text": part.text})
    return out or [{"type": "text", "text": "(no output)"}]

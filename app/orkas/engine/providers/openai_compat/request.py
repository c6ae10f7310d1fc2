"""Neutral request → OpenAI chat-completions body (OpenAI, OpenRouter, DeepSeek, Ollama, LM Studio, vLLM)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from orkas.engine.messages import (
    AssistantMessage,
    ImageBlock,
    LLMMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from orkas.engine.providers.base import ProviderRequest, ProviderSpec


def build_body(request: ProviderRequest, spec: ProviderSpec) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        messages.extend(_messages(message))
    body: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        spec.max_tokens_param: request.max_tokens,
    }
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.input_schema),
                },
            }
            for t in request.tools
        ]
        if request.tool_choice == "none":
            body["tool_choice"] = "none"
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.reasoning != "off" and spec.capabilities.reasoning:
        body["reasoning_effort"] = request.reasoning
    if request.session_id and spec.capabilities.prompt_cache:
        body["prompt_cache_key"] = cache_key(request.session_id)
    return body


def cache_key(session_id: str, limit: int = 64) -> str:
    """The session id as a cache key, shortened with a hash where it is too long (OpenAI-style
    endpoints reject keys over 64 characters)."""
    if len(session_id) <= limit:
        return session_id
    digest = hashlib.sha1(session_id.encode()).hexdigest()
    return f"{session_id[: limit - len(digest) - 2]}-{digest}"[:limit]


def _messages(message: LLMMessage) -> list[dict[str, Any]]:
    if isinstance(message, AssistantMessage):
        return [_assistant(message)]
    out: list[dict[str, Any]] = []
    rest: list[TextBlock | ImageBlock] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            # Tool messages carry text only; images were moved after the results (see convert.py).
            text = "\n".join(p.text for p in block.content if isinstance(p, TextBlock)) or "(no output)"
            if block.is_error:
                text = f"ERROR: {text}"
            out.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": text})
        elif isinstance(block, TextBlock | ImageBlock):
            rest.append(block)
    if rest:
        out.append({"role": "user", "content": _user_content(rest)})
    return out


def _user_content(blocks: list[TextBlock | ImageBlock]) -> str | list[dict[str, Any]]:
    if all(isinstance(b, TextBlock) for b in blocks):
        return "".join(b.text for b in blocks if isinstance(b, TextBlock))
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        else:
            url = f"data:{block.media_type};base64,{block.data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
    if calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(dict(c.input), ensure_ascii=False)},
            }
            for c in calls
        ]
    reasoning = "".join(b.text for b in message.content if isinstance(b, ThinkingBlock) and not b.redacted)
    if reasoning:
        # DeepSeek's reasoner needs its own reasoning replayed inside a tool loop.
        out["reasoning_content"] = reasoning
    return out

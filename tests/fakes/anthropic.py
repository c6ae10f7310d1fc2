"""Replies in the Anthropic Messages streaming protocol, for `FakeServer("/v1/messages")`."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.server import Reply, json_reply, sse

PATH = "/v1/messages"


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict[str, Any], id: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def thinking(value: str, signature: str = "sig-1") -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": signature}


def redacted(data: str) -> dict[str, Any]:
    return {"type": "redacted_thinking", "data": data}


def events(
    blocks: list[dict[str, Any]],
    *,
    stop_reason: str | None = None,
    model: str = "claude-test",
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_read: int = 0,
    cache_write: int = 0,
    raw_json: dict[int, str] | None = None,
) -> list[bytes]:
    """The SSE frames of one message. `raw_json` overrides a tool block's streamed input text."""
    if stop_reason is None:
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    out = [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": input_tokens,
                        "output_tokens": 1,
                        "cache_read_input_tokens": cache_read,
                        "cache_creation_input_tokens": cache_write,
                    },
                },
            },
        ),
        sse("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(blocks):
        out.extend(_block(index, block, (raw_json or {}).get(index)))
    out.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        )
    )
    out.append(sse("message_stop", {"type": "message_stop"}))
    return out


def _block(index: int, block: dict[str, Any], raw: str | None) -> list[bytes]:
    kind = block["type"]
    frames: list[bytes] = []
    start: dict[str, Any]
    if kind == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": part} for part in _split(block["text"])]
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        payload = raw if raw is not None else json.dumps(block["input"])
        deltas = [{"type": "input_json_delta", "partial_json": part} for part in _split(payload)]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": part} for part in _split(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "redacted_thinking":
        start = {"type": "redacted_thinking", "data": block["data"]}
        deltas = []
    else:
        raise ValueError(kind)
    frames.append(sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
    frames.extend(
        sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas
    )
    frames.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    return frames


def _split(value: str, parts: int = 3) -> list[str]:
    """Stream a string in a few fragments, as the API does."""
    if len(value) < parts:
        return [value] if value else []
    size = -(-len(value) // parts)
    return [value[i : i + size] for i in range(0, len(value), size)]


def message(*blocks: dict[str, Any], **kwargs: Any) -> Reply:
    return Reply(events=events(list(blocks), **kwargs))


def reply_text(value: str, **kwargs: Any) -> Reply:
    return message(text(value), **kwargs)


def error(status: int, error_type: str, msg: str, headers: dict[str, str] | None = None) -> Reply:
    return json_reply(status, {"type": "error", "error": {"type": error_type, "message": msg}}, headers)


def sse_error(error_type: str = "overloaded_error", msg: str = "Overloaded") -> bytes:
    return sse("error", {"type": "error", "error": {"type": error_type, "message": msg}})


def json_reply_ok() -> Reply:
    """A models-list answer, for validate_auth."""
    return json_reply(200, {"data": [{"id": "claude-test", "type": "model"}], "has_more": False})

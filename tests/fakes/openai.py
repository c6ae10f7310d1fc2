"""Replies in the OpenAI chat-completions streaming protocol, for `FakeServer("/chat/completions")`."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.server import Recorded, Reply, Responder, json_reply, sse

PATH = "/chat/completions"


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return sse(None, body)


def usage_chunk(prompt: int = 10, completion: int = 5, cached: int = 0) -> bytes:
    return sse(
        None,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        },
    )


DONE = b"data: [DONE]\n\n"


def text_events(value: str, *, reasoning: str = "", usage: tuple[int, int] = (10, 5)) -> list[bytes]:
    frames = [chunk({"role": "assistant", "content": ""})]
    if reasoning:
        frames.extend(
            chunk({"reasoning_content": part})
            for part in (reasoning[: len(reasoning) // 2], reasoning[len(reasoning) // 2 :])
        )
    half = len(value) // 2
    frames.extend(chunk({"content": part}) for part in (value[:half], value[half:]) if part)
    frames.append(chunk({}, "stop"))
    frames.append(usage_chunk(*usage))
    frames.append(DONE)
    return frames


def tool_events(calls: list[tuple[str, str, dict[str, Any]]], *, text: str = "") -> list[bytes]:
    """Tool calls streamed as the API does: id and name first, then argument fragments."""
    frames = [chunk({"role": "assistant", "content": text or None})]
    for index, (call_id, name, args) in enumerate(calls):
        raw = json.dumps(args)
        frames.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        for part in (raw[: len(raw) // 2], raw[len(raw) // 2 :]):
            frames.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
    frames.append(chunk({}, "tool_calls"))
    frames.append(usage_chunk())
    frames.append(DONE)
    return frames


def reply_text(value: str, **kwargs: Any) -> Reply:
    return Reply(events=text_events(value, **kwargs))


def reply_tools(calls: list[tuple[str, str, dict[str, Any]]], **kwargs: Any) -> Reply:
    return Reply(events=tool_events(calls, **kwargs))


def error(status: int, msg: str, code: str | None = None, headers: dict[str, str] | None = None) -> Reply:
    return json_reply(status, {"error": {"message": msg, "type": "invalid_request_error", "code": code}}, headers)


def stream_error(msg: str = "server had an error", kind: str = "server_error") -> bytes:
    return sse(None, {"error": {"message": msg, "type": kind}})


EMBEDDINGS_PATH = "/embeddings"


def embeddings_responder(dim: int = 64) -> Responder:
    """An `/embeddings` endpoint whose vectors are feature hashes of the input (same text, same
    vector; shared words, nearby vectors), in OpenAI's answer shape, listed out of order as the API
    allows."""
    from orkas.engine.memory.embedders import HashingEmbedder

    hashing = HashingEmbedder(dim)

    def answer(request: Recorded) -> Reply:
        texts = request.json["input"]
        vectors = hashing.passages(texts if isinstance(texts, list) else [texts])
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        return json_reply(200, {"object": "list", "data": data[::-1], "model": request.json["model"]})

    return answer

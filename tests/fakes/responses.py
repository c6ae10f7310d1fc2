"""Replies in OpenAI's Responses API streaming protocol (what Codex speaks), for `FakeServer("/responses")`: a
message streamed as text deltas, function calls as output items, and `response.completed` with usage."""

from __future__ import annotations

import itertools
import json
from typing import Any

from tests.fakes.server import Recorded, Reply, sse

PATH = "/responses"
_ids = itertools.count(1)


def _event(kind: str, **body: Any) -> bytes:
    return sse(kind, {"type": kind, **body})


def _response(
    ident: str, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "id": ident,
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": "gpt-test",
        "output": output,
        "usage": usage,
    }


def text_item(text: str) -> dict[str, Any]:
    return {
        "id": f"msg_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def call_item(
    name: str, arguments: dict[str, Any], call_id: str | None = None, namespace: str | None = None
) -> dict[str, Any]:
    """A function call; `namespace`: the tool group it belongs to (Codex offers an MCP server's tools as one
    `namespace` tool, `mcp__<server>`, and runs a call that names it)."""
    n = next(_ids)
    return {
        **({"namespace": namespace} if namespace else {}),
        "id": f"fc_{n}",
        "type": "function_call",
        "status": "completed",
        "call_id": call_id or f"call_{n}",
        "name": name,
        "arguments": json.dumps(arguments),
    }


def events(*items: dict[str, Any], chunk: int = 12, input_tokens: int = 20, output_tokens: int = 8) -> list[bytes]:
    """One response: each item added, streamed (text in `chunk`-character deltas) and done, then completed."""
    ident = f"resp_{next(_ids)}"
    frames = [
        _event("response.created", response=_response(ident, "in_progress", [])),
        _event("response.in_progress", response=_response(ident, "in_progress", [])),
    ]
    for index, item in enumerate(items):
        opened = {**item, "status": "in_progress"}
        if item["type"] == "message":
            opened["content"] = []
        elif item["type"] == "function_call":
            opened["arguments"] = ""
        frames.append(_event("response.output_item.added", output_index=index, item=opened))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            frames.append(
                _event(
                    "response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=part
                )
            )
            for start in range(0, len(text), chunk):
                frames.append(
                    _event(
                        "response.output_text.delta",
                        item_id=item["id"],
                        output_index=index,
                        content_index=0,
                        delta=text[start : start + chunk],
                    )
                )
            frames.append(
                _event("response.output_text.done", item_id=item["id"], output_index=index, content_index=0, text=text)
            )
            frames.append(
                _event(
                    "response.content_part.done",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    part={**part, "text": text},
                )
            )
        else:
            frames.append(
                _event(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=index,
                    delta=item["arguments"],
                )
            )
            frames.append(
                _event(
                    "response.function_call_arguments.done",
                    item_id=item["id"],
                    output_index=index,
                    arguments=item["arguments"],
                )
            )
        frames.append(_event("response.output_item.done", output_index=index, item=item))
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }
    frames.append(_event("response.completed", response=_response(ident, "completed", list(items), usage)))
    return frames


def reply(*items: dict[str, Any], event_delay: float = 0.0) -> Reply:
    return Reply(headers={"content-type": "text/event-stream"}, events=events(*items), event_delay=event_delay)


def tool_names(request: Recorded) -> list[str]:
    return [str(t.get("name")) for t in request.json.get("tools") or [] if isinstance(t, dict)]


def namespace_of(request: Recorded, name: str) -> str | None:
    """The namespace tool that offers `name` in this request, if any."""
    for tool in request.json.get("tools") or []:
        if isinstance(tool, dict) and tool.get("type") == "namespace":
            if any(isinstance(t, dict) and t.get("name") == name for t in tool.get("tools") or []):
                return str(tool.get("name"))
    return None


def outputs(request: Recorded) -> list[str]:
    """The function-call outputs the client sent back in this request."""
    found = []
    for item in request.json.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            output = item.get("output")
            found.append(output if isinstance(output, str) else json.dumps(output))
    return found

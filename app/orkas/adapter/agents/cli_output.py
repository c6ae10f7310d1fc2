"""What an agent CLI's output lines say, by backend: text for the member's bubble, its session id (resumed next
turn), usage, a final answer or an error.

    claude    `claude -p --output-format stream-json --verbose`
    codex     `codex exec --json`
    opencode  `opencode run --format json`
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from orkas.engine.messages import Usage

Backend = Literal["claude", "codex", "opencode"]


@dataclass(frozen=True, slots=True)
class Said:
    """One thing a CLI's output line told us."""

    kind: Literal["text", "session", "final", "error", "usage"]
    text: str = ""
    usage: Usage | None = None


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(input_tokens=int(raw.get("input_tokens") or 0), output_tokens=int(raw.get("output_tokens") or 0))


def parse_claude(line: str) -> list[Said]:
    """`claude -p --output-format stream-json --verbose`: one JSON object per line."""
    try:
        data = json.loads(line)
    except ValueError:
        return []
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "system" and data.get("subtype") == "init" and data.get("session_id"):
        return [Said("session", str(data["session_id"]))]
    if kind == "assistant":
        blocks = (data.get("message") or {}).get("content") or []
        return [Said("text", str(b.get("text", ""))) for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    if kind == "result":
        said = [Said("session", str(data["session_id"]))] if data.get("session_id") else []
        usage = _usage(data.get("usage"))
        if usage is not None:
            said.append(Said("usage", usage=usage))
        if data.get("is_error") or str(data.get("subtype", "success")) != "success":
            return [*said, Said("error", str(data.get("result") or data.get("subtype") or "the CLI failed"))]
        return [*said, Said("final", str(data.get("result") or ""))]
    return []


def parse_codex(line: str) -> list[Said]:
    """`codex exec --json`: thread.started, item.completed (agent_message), turn.completed / turn.failed."""
    try:
        data = json.loads(line)
    except ValueError:
        return []
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "thread.started" and data.get("thread_id"):
        return [Said("session", str(data["thread_id"]))]
    if kind == "item.completed":
        item = data.get("item") or {}
        if item.get("type") in ("agent_message", "assistant_message") and item.get("text"):
            return [Said("text", str(item["text"]))]
    if kind == "turn.completed":
        usage = _usage(data.get("usage"))
        return [Said("usage", usage=usage)] if usage is not None else []
    if kind in ("turn.failed", "error"):
        error = data.get("error") if isinstance(data.get("error"), dict) else data
        return [Said("error", str(error.get("message") or "the CLI failed"))]
    return []


def parse_opencode(line: str) -> list[Said]:
    """opencode `run --format json`: each event carries the sessionID; `text` parts, `step_finish` with tokens,
    `error`. A line that is not JSON (an older opencode, a warning) is its text."""
    try:
        data = json.loads(line)
    except ValueError:
        return [Said("text", line + "\n")]
    if not isinstance(data, dict):
        return []
    said = [Said("session", str(data["sessionID"]))] if data.get("sessionID") else []
    kind = data.get("type")
    part: dict[str, Any] = data["part"] if isinstance(data.get("part"), dict) else {}
    if kind == "text" and part.get("text"):
        said.append(Said("text", str(part["text"])))
    elif kind == "step_finish" and isinstance(part.get("tokens"), dict):
        said.append(Said("usage", usage=_usage({"input_tokens": part["tokens"].get("input"),
                                                "output_tokens": part["tokens"].get("output")})))  # fmt: skip
    elif kind == "error":
        error: dict[str, Any] = data["error"] if isinstance(data.get("error"), dict) else {}
        message = (error.get("data") or {}).get("message") if isinstance(error.get("data"), dict) else None
        said.append(Said("error", str(message or error.get("name") or "the CLI failed")))
    return said


PARSERS: dict[Backend, Callable[[str], list[Said]]] = {
    "claude": parse_claude,
    "codex": parse_codex,
    "opencode": parse_opencode,
}

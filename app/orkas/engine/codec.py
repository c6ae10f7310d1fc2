"""Messages ↔ JSON-ready dicts: the on-disk transcript format (schema version 1).

One record per message:
    {"v": 1, "id": …, "ts": …, "role": "user" | "assistant" | "app", "content": [blocks], …}
Assistant records add provider, model, stop_reason, usage and partial. Decoding is strict: a
record that does not fit raises `RecordError`, which a loader reports and skips.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orkas.engine.messages import (
    AssistantMessage,
    AttachmentBlock,
    ContentBlock,
    ImageBlock,
    Message,
    Notice,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)

SCHEMA_VERSION = 1
_STOP_REASONS: frozenset[str] = frozenset(
    {"end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn", "error", "aborted"}
)


class RecordError(ValueError):
    """A transcript record that cannot be decoded."""


def encode(message: Message) -> dict[str, Any]:
    record: dict[str, Any] = {
        "v": SCHEMA_VERSION,
        "id": message.id,
        "ts": message.created_at,
        "role": message.role,
    }
    if isinstance(message, Notice):
        record["kind"] = message.kind
        record["text"] = message.text
        if message.detail:
            record["detail"] = dict(message.detail)
        return record
    record["content"] = [encode_block(b) for b in message.content]
    if isinstance(message, AssistantMessage):
        record["provider"] = message.provider
        record["model"] = message.model
        record["stop_reason"] = message.stop_reason
        u = message.usage
        record["usage"] = [u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens]
        if message.partial:
            record["partial"] = True
        if message.provider_details:
            record["details"] = dict(message.provider_details)
    return record


def encode_block(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, AttachmentBlock):
        return {"type": "attachment", "name": block.name, "size": block.size, "media_type": block.media_type,
                "path": block.path}  # fmt: skip
    if isinstance(block, ImageBlock):
        return {"type": "image", "media_type": block.media_type, "data": block.data}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}
    if isinstance(block, ToolResultBlock):
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": block.tool_use_id,
            "content": [encode_block(c) for c in block.content],
        }
        if block.is_error:
            out["is_error"] = True
        return out
    out = {"type": "thinking", "text": block.text}
    if block.signature is not None:
        out["signature"] = block.signature
    if block.redacted:
        out["redacted"] = True
    return out


def decode(record: Any) -> Message:
    """Raise `RecordError` for anything that is not a valid version-1 record."""
    if not isinstance(record, Mapping):
        raise RecordError(f"a record must be an object, got {type(record).__name__}")
    if record.get("v") != SCHEMA_VERSION:
        raise RecordError(f"unknown schema version {record.get('v')!r}")
    try:
        return _decode(record)
    except RecordError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise RecordError(f"malformed {record.get('role')!r} record: {type(e).__name__}: {e}") from e


def _decode(record: Mapping[str, Any]) -> Message:
    role = record["role"]
    ident = str(record["id"])
    ts = float(record["ts"])
    if role == "app":
        raw = record.get("detail") or {}
        detail = {str(k): v for k, v in raw.items() if isinstance(v, str | int) and not isinstance(v, bool)}
        return Notice(kind=str(record["kind"]), text=str(record["text"]), id=ident, created_at=ts, detail=detail)
    content = tuple(decode_block(b) for b in record["content"])
    if role == "user":
        return UserMessage(content=content, id=ident, created_at=ts)
    if role != "assistant":
        raise RecordError(f"unknown role {role!r}")
    stop = record.get("stop_reason", "end_turn")
    if stop not in _STOP_REASONS:
        raise RecordError(f"unknown stop reason {stop!r}")
    usage = [int(n) for n in record.get("usage", (0, 0, 0, 0))]
    return AssistantMessage(
        content=content,
        provider=str(record["provider"]),
        model=str(record["model"]),
        stop_reason=_stop(stop),
        usage=Usage(
            input_tokens=usage[0],
            output_tokens=usage[1],
            cache_read_tokens=usage[2],
            cache_write_tokens=usage[3],
        ),
        partial=bool(record.get("partial", False)),
        provider_details=dict(record.get("details") or {}),
        id=ident,
        created_at=ts,
    )


def _stop(value: str) -> StopReason:
    for reason in ("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn", "error"):
        if value == reason:
            return reason
    return "aborted"


def decode_block(raw: Mapping[str, Any]) -> ContentBlock:
    kind = raw["type"]
    if kind == "text":
        return TextBlock(text=str(raw["text"]))
    if kind == "image":
        return ImageBlock(data=str(raw["data"]), media_type=str(raw["media_type"]))
    if kind == "attachment":
        return AttachmentBlock(
            name=str(raw["name"]), size=int(raw["size"]), media_type=str(raw["media_type"]), path=str(raw["path"])
        )
    if kind == "tool_use":
        if not isinstance(raw["input"], Mapping):
            raise RecordError("tool_use input must be an object")
        return ToolUseBlock(id=str(raw["id"]), name=str(raw["name"]), input=dict(raw["input"]))
    if kind == "tool_result":
        parts: list[TextBlock | ImageBlock] = []
        for part in raw["content"]:
            block = decode_block(part)
            if not isinstance(block, TextBlock | ImageBlock):
                raise RecordError("a tool result holds only text and images")
            parts.append(block)
        return ToolResultBlock(
            tool_use_id=str(raw["tool_use_id"]),
            content=tuple(parts),
            is_error=bool(raw.get("is_error", False)),
        )
    if kind == "thinking":
        signature = raw.get("signature")
        return ThinkingBlock(
            text=str(raw["text"]),
            signature=None if signature is None else str(signature),
            redacted=bool(raw.get("redacted", False)),
        )
    raise RecordError(f"unknown block type {kind!r}")

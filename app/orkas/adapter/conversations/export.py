"""A conversation taken out of the app: as Markdown a person reads, or as a zip with its JSON (the full
records) and its attachments. A group conversation exports its bus — who said what, in order.

Nothing secret is in a conversation's records (keys live in the vault), and attachments are only the
copies kept in the conversation's own folder, never other files.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orkas.engine.codec import encode
from orkas.engine.messages import (
    AssistantMessage,
    Message,
    Notice,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

INDEX = "index.json"  # attachments.py's record of the uploads: not an attachment
MAX_TOOL_CHARS = 2000  # of a tool's input or result in the Markdown (the JSON has all of it)


def as_markdown(title: str, messages: Sequence[Message] = (), group: Sequence[Mapping[str, Any]] | None = None) -> str:
    lines = [f"# {title or 'Conversation'}", ""]
    if group is not None:
        for record in group:
            if record.get("dispatch"):
                lines += [f"> {record['from']} asked {', '.join(record.get('to', []))}: {record['dispatch']}", ""]
                continue
            for step in record.get("process") or ():  # the questions it asked, as they were answered
                if isinstance(step, Mapping) and isinstance(step.get("approval"), Mapping):
                    lines += [_asked(step["approval"], str(step["approval"].get("preview", ""))), ""]
            if str(record.get("text") or "").strip():
                who = "You" if record["from"] == "user" else str(record["from"])
                lines += [f"**{who}:**", "", str(record["text"]).strip(), ""]
        return "\n".join(lines).rstrip() + "\n"
    for message in messages:
        if isinstance(message, UserMessage):
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()
            results = [b for b in message.content if isinstance(b, ToolResultBlock)]
            for result in results:
                body = "".join(c.text for c in result.content if isinstance(c, TextBlock))
                lines += ["<details><summary>result</summary>", "", "```", _cut(body), "```", "", "</details>", ""]
            if text:
                lines += ["**You:**", "", text, ""]
        elif isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextBlock) and block.text.strip():
                    lines += ["**Orkas:**", "", block.text.strip(), ""]
                elif isinstance(block, ToolUseBlock):
                    lines += [f"`{block.name}` {_cut(json.dumps(dict(block.input), ensure_ascii=False))}", ""]
        elif isinstance(message, Notice) and message.kind == "approval":  # asked, and how it was answered
            lines += [_asked(message.detail, message.text), ""]
        elif isinstance(message, Notice):
            lines += [f"*({message.kind}: {message.text})*", ""]
    return "\n".join(lines).rstrip() + "\n"


def as_zip(
    title: str,
    meta: Mapping[str, Any],
    messages: Sequence[Message] = (),
    group: Sequence[Mapping[str, Any]] | None = None,
    attachments: Path | None = None,
) -> bytes:
    """`conversation.json` (meta and every record), `conversation.md`, and `attachments/`."""
    data: dict[str, Any] = {"conversation": dict(meta), "messages": [encode(m) for m in messages]}
    if group is not None:
        data["group"] = list(group)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("conversation.json", json.dumps(data, ensure_ascii=False, indent=1, default=str))
        bundle.writestr("conversation.md", as_markdown(title, messages, group))
        if attachments is not None and attachments.is_dir():
            for path in sorted(attachments.rglob("*")):
                own = path.is_file() and not path.is_symlink()  # only the conversation's own copies
                if own and path.relative_to(attachments) != Path(INDEX):  # not the store's bookkeeping
                    bundle.write(path, f"attachments/{path.relative_to(attachments)}")
    return buffer.getvalue()


def _asked(facts: Mapping[str, Any], preview: str) -> str:
    who = f" on {facts['by']}" if facts.get("by") else ""
    answer = facts.get("closed") or f"{facts.get('decision', '')}{who}"
    return f"*(asked to run {facts.get('tool', '')}: `{preview}` — {answer})*"


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TOOL_CHARS else text[:MAX_TOOL_CHARS] + " …"

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
# An approval's answer as a person says it (the records keep the app's own words).
DECIDED = {
    "allow_once": "allowed once",
    "allow_run": "allowed for this run",
    "always": "always allowed",
    "deny": "denied",
}
DECLINED = {
    "expired": "declined: nobody answered in time",
    "unattended": "declined: nobody could be asked",
    "stopped": "declined: the run was stopped",
}


def as_markdown(title: str, messages: Sequence[Message] = (), group: Sequence[Mapping[str, Any]] | None = None) -> str:
    lines = [f"# {title or 'Conversation'}", ""]
    if group is not None:
        return _group_markdown(lines, group)
    # A question is read before the call it was about (the transcript keeps it after the call's result).
    asked = {str(m.detail.get("tool_use_id")): m for m in messages if isinstance(m, Notice) and m.kind == "approval"}
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
                    if (question := asked.pop(block.id, None)) is not None:
                        lines += [_asked(question.detail, question.text), ""]
                    lines += [f"`{block.name}` {_cut(json.dumps(dict(block.input), ensure_ascii=False))}", ""]
        elif isinstance(message, Notice) and message.kind == "approval":  # its call was not found: where it was kept
            if str(message.detail.get("tool_use_id")) in asked:
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


def _group_markdown(lines: list[str], group: Sequence[Mapping[str, Any]]) -> str:
    """The bus, in order: who said what (Orkas for the commander, as every view says it), what was asked of whom,
    the questions each asked as they were answered, and a turn the person stopped said once, after it."""
    stopped = False
    for record in group:
        if record["from"] == "user" and stopped:
            lines += ["*(stopped by you)*", ""]
            stopped = False
        stopped = stopped or bool(record.get("stopped"))
        if record.get("dispatch"):
            lines += [f"> Orkas asked {', '.join(record.get('to', []))}: {record['dispatch']}", ""]
            continue
        for step in record.get("process") or ():
            if isinstance(step, Mapping) and isinstance(step.get("approval"), Mapping):
                lines += [_asked(step["approval"], str(step["approval"].get("preview", ""))), ""]
        if str(record.get("text") or "").strip():
            who = {"user": "You", "commander": "Orkas"}.get(str(record["from"]), str(record["from"]))
            lines += [f"**{who}:**", "", str(record["text"]).strip(), ""]
    if stopped:
        lines += ["*(stopped by you)*", ""]
    return "\n".join(lines).rstrip() + "\n"


def _asked(facts: Mapping[str, Any], preview: str) -> str:
    """A question and its answer, as a person says it: "allowed once on Pixel", "declined: the run was stopped"."""
    decision = str(facts.get("decision", ""))
    answer = DECIDED.get(decision, decision) + (f" on {facts['by']}" if facts.get("by") else "")
    answer = DECLINED.get(str(facts.get("closed") or ""), answer)
    return f"*(asked to run {facts.get('tool', '')}: `{preview}` — {answer})*"


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TOOL_CHARS else text[:MAX_TOOL_CHARS] + " …"

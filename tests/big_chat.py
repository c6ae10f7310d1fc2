"""Big data folders, written straight in the on-disk format (as the app writes them), in a fraction of a
second: one conversation of many messages, and many small conversations. The window and phone tests and
the benchmarks of issue 38 (bench/big_chats.py) open and search them."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import orjson

WORDS = "parser schema build lines check write report folder index budget cache stream".split()
ANSWER = (
    "The **parser** reads each line, keeps the ones that matter and hands them to `build()`, "
    "which checks the schema before anything is written.\n\n- first point\n- second point with `code`\n"
)


def _meta(home: Path, chat_id: str, title: str, updated: float) -> None:
    folder = home / "conversations" / chat_id
    folder.mkdir(parents=True, exist_ok=True)
    workspace = home / "workspaces" / chat_id
    workspace.mkdir(parents=True, exist_ok=True)
    # Only the fields every version reads (a benchmark's baseline knows fewer of them).
    meta = {"id": chat_id, "title": title, "created": updated, "updated": updated, "workspace": str(workspace)}
    (folder / "meta.json").write_text(json.dumps(meta))


def _user(i: int, text: str) -> dict[str, object]:
    return {"v": 1, "id": f"u{i:06d}", "ts": 1.7e9 + i, "role": "user", "content": [{"type": "text", "text": text}]}


def _assistant(i: int, content: list[dict[str, object]], stop: str = "end_turn") -> dict[str, object]:
    return {
        "v": 1,
        "id": f"a{i:06d}",
        "ts": 1.7e9 + i,
        "role": "assistant",
        "content": content,
        "provider": "anthropic",
        "model": "claude-test",
        "stop_reason": stop,
        "usage": [120, 80, 0, 0],
    }


def transcript(messages: int) -> bytes:
    """`messages` records: questions and answers, every tenth turn a tool call and its result (four records)."""
    lines: list[bytes] = []
    turn = 0
    while len(lines) < messages:
        records = [_user(len(lines), f"Question {turn}: what about the {WORDS[turn % len(WORDS)]}?")]
        if turn % 10 == 9 and messages - len(lines) >= 4:
            call = {"type": "tool_use", "id": f"t{turn}", "name": "read_file", "input": {"path": f"notes/{turn}.md"}}
            records.append(_assistant(len(lines) + 1, [{"type": "text", "text": "Let me look."}, call], "tool_use"))
            result = {"type": "tool_result", "tool_use_id": f"t{turn}", "content": [{"type": "text", "text": "ok"}]}
            records.append({**_user(len(lines) + 2, ""), "content": [result]})
            records.append(_assistant(len(lines) + 3, [{"type": "text", "text": f"Answer {turn}: {ANSWER}"}]))
        else:
            records.append(_assistant(len(lines) + 1, [{"type": "text", "text": f"Answer {turn}: {ANSWER}"}]))
        lines.extend(orjson.dumps(r) + b"\n" for r in records[: messages - len(lines)])
        turn += 1
    return b"".join(lines)


def write_big_chat(home: Path, messages: int = 20_000, title: str = "Long history") -> str:
    """One conversation of `messages` messages; its last question is "Question N" with N = its turns − 1."""
    chat_id = uuid.uuid4().hex
    _meta(home, chat_id, title, time.time())
    (home / "conversations" / chat_id / "messages.jsonl").write_bytes(transcript(messages))
    return chat_id


def write_many_chats(home: Path, count: int = 1000, messages: int = 20) -> dict[int, str]:
    """`count` small conversations, the oldest first; the one of index i says "needle-i" in its first question
    (once, nowhere else) and is titled "Chat i". Returns index → id."""
    ids: dict[int, str] = {}
    now = time.time()
    body = transcript(messages)
    for i in range(count):
        chat_id = uuid.uuid4().hex
        _meta(home, chat_id, f"Chat {i}", now - (count - i) * 60)
        first = orjson.dumps(_user(999_999, f"Remember needle-{i:04d} for later")) + b"\n"
        reply = orjson.dumps(_assistant(999_998, [{"type": "text", "text": "Noted."}])) + b"\n"
        (home / "conversations" / chat_id / "messages.jsonl").write_bytes(first + reply + body)
        ids[i] = chat_id
    return ids

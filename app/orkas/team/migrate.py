"""A conversation that was one agent becomes a group the first time a member joins.

Before: `messages.jsonl` is the agent's engine transcript. After: that transcript is the commander's
(`actors/commander.jsonl`) and `messages.jsonl` is the bus, rebuilt from it (what the person wrote, what
the agent answered). Crash-safe in any order of interruption: the bus is written beside the transcript
first, then the transcript moves, then the bus takes its name; a half-done migration finishes next time.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from orkas.adapter.conversations.sessions import load
from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage
from orkas.team.bus import COMMANDER, USER

COMMANDER_TRANSCRIPT = Path("actors") / "commander.jsonl"


def ensure_group_layout(folder: Path) -> bool:
    """Give `folder` the group layout; True when something was migrated."""
    bus = folder / "messages.jsonl"
    staged = folder / "messages.jsonl.group"
    transcript = folder / COMMANDER_TRANSCRIPT
    if transcript.exists():
        if staged.exists() and not bus.exists():  # interrupted between the move and the rename
            os.replace(staged, bus)
            return True
        staged.unlink(missing_ok=True)
        return False
    if not bus.exists():
        return False  # a new conversation: nothing to carry over
    session, _ = load(bus, write_back=False)
    session.close()
    lines, ts = [], 0.0
    for message in session.messages():
        if isinstance(message, UserMessage):
            sender = USER
        elif isinstance(message, AssistantMessage):
            sender = COMMANDER
        else:
            continue
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()
        if not text:
            continue
        ts = max(message.created_at or 0.0, ts + 1e-6)
        lines.append(json.dumps({"id": uuid.uuid4().hex, "ts": ts, "from": sender, "text": text, "seg": 0}))
    staged.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    transcript.parent.mkdir(parents=True, exist_ok=True)
    os.replace(bus, transcript)
    os.replace(staged, bus)
    return True

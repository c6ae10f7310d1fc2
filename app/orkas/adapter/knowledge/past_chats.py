"""Past conversations in the knowledge base (what `chat_search` finds): each turn's new messages added as one
document, `chat/<id>/<first message id>`; `<kb>/chats.json` remembers the last message indexed per
conversation. Re-chunking the whole transcript every turn grew with its length."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from orkas.core.fsutil import atomic_write
from orkas.engine.messages import AssistantMessage, Message, TextBlock, UserMessage

if TYPE_CHECKING:
    from orkas.engine.memory.kb import KnowledgeBase


def transcript_text(messages: Sequence[Message]) -> str:
    """One line per message (`[id] role: text`), the form chat_search cites."""
    lines = []
    for message in messages:
        if isinstance(message, UserMessage | AssistantMessage):
            text = " ".join(b.text for b in message.content if isinstance(b, TextBlock) and b.text)
            text = " ".join(text.split())
            if text:
                lines.append(f"[{message.id}] {message.role}: {text}")
    return "\n".join(lines)


class PastChats:
    def __init__(self, folder: Path, chats: Callable[[], KnowledgeBase], kick: Callable[[], None]) -> None:
        self.folder = folder
        self.chats = chats  # opened on first use
        self.kick = kick  # the embedding worker: there is new text
        self._lock = threading.Lock()  # hooks of two conversations may run at once, on worker threads

    def index(self, conversation_id: str, title: str, messages: Sequence[Message]) -> None:
        """Index what was said since the last time. When the transcript no longer holds the last message indexed
        (compacted, repaired), the conversation is indexed again from scratch."""
        with self._lock:
            state = self._state()
            last = state.get(conversation_id)
            ids = [m.id for m in messages]
            if last is not None and last in ids:
                new = messages[ids.index(last) + 1 :]
            else:
                self._forget(conversation_id)
                state = self._state()
                new = messages
            text = transcript_text(new)
            if new:
                if text:
                    doc = f"chat/{conversation_id}/{new[0].id}"
                    self.chats().add_text(doc, text, source=title or "untitled conversation")
                    self.kick()
                state[conversation_id] = new[-1].id
                self._save(state)

    def forget(self, conversation_id: str) -> None:
        with self._lock:
            self._forget(conversation_id)

    def _forget(self, conversation_id: str) -> None:
        chats = self.chats()
        for doc in chats.document_ids(f"chat/{conversation_id}"):  # the old single document too
            chats.remove(doc)
        state = self._state()
        if state.pop(conversation_id, None) is not None:
            self._save(state)

    def _state(self) -> dict[str, str]:
        """conversation id → the last message indexed."""
        try:
            data = json.loads((self.folder / "chats.json").read_text())
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def _save(self, state: dict[str, str]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self.folder / "chats.json", json.dumps(state).encode())

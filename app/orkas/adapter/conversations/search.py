"""What the sidebar's search finds: the chats whose title or history, as each chat reads now, say the words.

Only a chat's live transcript is searched, never the versions an edit or another answer put aside
(branches.py) nor the archive a rewrite keeps: a result opens the chat at the matching message and marks the
words there (find.js), so a hit on words the chat no longer shows would open it on "Not found". Versions
stay one arrow away; when one is brought back it is the transcript again, and found again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from orkas.adapter.conversations.sessions import load
from orkas.adapter.conversations.store import Conversation, ConversationStore
from orkas.engine.messages import AssistantMessage, UserMessage

SNIPPET_CONTEXT = 40  # characters shown either side of the words


@dataclass(frozen=True, slots=True)
class Hit:
    conversation: Conversation
    snippet: str
    message_id: str = ""  # the first message with the words ("" when the title matched)


def search(store: ConversationStore, query: str, limit: int = 20) -> list[Hit]:
    """Conversations whose title or messages contain `query` (case-insensitive), most recent first."""
    needle = query.strip().lower()
    if not needle:
        return []
    hits: list[Hit] = []
    for conversation in store.recent():
        if needle in conversation.title.lower():
            hits.append(Hit(conversation, conversation.title))
        else:
            found = _find(store, conversation.id, needle)
            if found is not None:
                hits.append(Hit(conversation, *found))
        if len(hits) >= limit:
            break
    return hits


def _find(store: ConversationStore, conversation_id: str, needle: str) -> tuple[str, str] | None:
    """The snippet around the first match, and that message's id."""
    path = store.root / conversation_id / "messages.jsonl"
    # A cheap pre-check before decoding anything: the words as the transcript's JSON spells them (a quote or a
    # backslash escaped; any other letter as it is).
    spelled = json.dumps(needle, ensure_ascii=False)[1:-1]
    if not path.exists() or spelled not in path.read_text(errors="replace").lower():
        return None
    session, _ = load(path, write_back=False)
    for message in session.messages():
        if isinstance(message, UserMessage | AssistantMessage):
            text = "".join(getattr(b, "text", "") for b in message.content)
            at = text.lower().find(needle)
            if at >= 0:
                return text[max(0, at - SNIPPET_CONTEXT) : at + len(needle) + SNIPPET_CONTEXT], message.id
    return None

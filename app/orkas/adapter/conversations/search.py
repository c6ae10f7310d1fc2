"""What the sidebar's search finds: the chats whose title or history, as each chat reads now, say the words.

Only a chat's live transcript is searched, never the versions an edit or another answer put aside
(branches.py) nor the archive a rewrite keeps: a result opens the chat at the matching message and marks the
words there (find.js), so a hit on words the chat no longer shows would open it on "Not found". Versions
stay one arrow away; when one is brought back it is the transcript again, and found again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from orkas.adapter.conversations.sessions import load
from orkas.adapter.conversations.store import Conversation, ConversationStore
from orkas.engine.messages import AssistantMessage, UserMessage

SNIPPET_CONTEXT = 40  # characters shown either side of the words

GroupSaid = Callable[[str], Sequence[tuple[str, str]] | None]
"""A group chat's messages as (id, text), in the order shown; None for a one-agent chat. A group's
messages.jsonl is its bus, which this layer cannot read (the team, above it, can)."""


@dataclass(frozen=True, slots=True)
class Hit:
    conversation: Conversation
    snippet: str
    message_id: str = ""  # the first message with the words ("" when the title matched)


def search(store: ConversationStore, query: str, limit: int = 20, group_said: GroupSaid | None = None) -> list[Hit]:
    """Conversations whose title or messages contain `query` (case-insensitive), most recent first."""
    needle = query.strip().lower()
    if not needle:
        return []
    hits: list[Hit] = []
    for conversation in store.recent():
        if needle in conversation.title.lower():
            hits.append(Hit(conversation, conversation.title))
        else:
            found = _find(store, conversation.id, needle, group_said)
            if found is not None:
                hits.append(Hit(conversation, *found))
        if len(hits) >= limit:
            break
    return hits


def _find(
    store: ConversationStore, conversation_id: str, needle: str, group_said: GroupSaid | None
) -> tuple[str, str] | None:
    """The snippet around the first match, and that message's id."""
    path = store.root / conversation_id / "messages.jsonl"
    # A cheap pre-check before decoding anything: the words as the transcript's JSON spells them (a quote or a
    # backslash escaped; any other letter as it is).
    spelled = json.dumps(needle, ensure_ascii=False)[1:-1]
    if not path.exists() or spelled not in path.read_text(errors="replace").lower():
        return None
    said = group_said(conversation_id) if group_said is not None else None
    if said is None:  # one agent: its transcript
        session, _ = load(path, write_back=False)
        said = [
            (m.id, "".join(getattr(b, "text", "") for b in m.content))
            for m in session.messages()
            if isinstance(m, UserMessage | AssistantMessage)
        ]
    for message_id, text in said:
        at = text.lower().find(needle)
        if at >= 0:
            return text[max(0, at - SNIPPET_CONTEXT) : at + len(needle) + SNIPPET_CONTEXT], message_id
    return None

"""What the sidebar's search finds: the chats whose title or history, as each chat reads now, say the words.

Only a chat's live transcript is searched, never the versions an edit or another answer put aside
(branches.py) nor the archive a rewrite keeps: a result opens the chat at the matching message and marks the
words there (find.js), so a hit on words the chat no longer shows would open it on "Not found". Versions
stay one arrow away; when one is brought back it is the transcript again, and found again.

`SearchIndex` keeps what each chat says in memory, lowercased and joined, read again only for a chat whose
transcript (or, for its title, whose folder) changed since: reading 1,000 chats' files for each search took
~60 ms before a word was compared, and a common word decoded 20 whole transcripts (~190 ms). Which chats changed
is told by the kernel (changes.py), so a search opens no file unless one changed — checking every chat's two
files was still ~10 ms of a 16–25 ms search; where it cannot be told, every chat is checked as before. A search
is then a substring scan per chat (the same words found as before). The first search of a process reads
everything once (`warm`: the window asks for it when the search box is focused).
"""

from __future__ import annotations

import bisect
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orkas.adapter.conversations.changes import ChatChanges
from orkas.adapter.conversations.sessions import load
from orkas.adapter.conversations.store import Conversation, ConversationStore, listed_one
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
    """Conversations whose title or messages contain `query` (case-insensitive), most recent first: once, with
    nothing kept (a `SearchIndex` keeps what it read for the next search)."""
    return SearchIndex(store, group_said, follow=False).search(query, limit)


@dataclass(slots=True)
class _Said:
    """What one chat says, as searched: each message's id and text, and all of it lowercased in one string."""

    signature: tuple[int, int] | None
    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    folded: str = ""
    starts: list[int] = field(default_factory=list)  # where each message's text starts in `folded`


@dataclass(slots=True)
class _Chat:
    stamp: int  # its folder's mtime_ns when its metadata was read (-1: unknown)
    conversation: Conversation
    title: str = ""  # lowercased

    def __post_init__(self) -> None:
        self.title = self.conversation.title.lower()


def _stamp(folder: Path) -> int:
    try:
        return folder.stat().st_mtime_ns
    except OSError:
        return -1


class SearchIndex:
    """The sidebar's search (`search`'s results, the same words found) over what each chat says, kept in memory
    and read again per chat only when its files changed (`ChatChanges` says which, or every chat is looked at).
    Thread-safe: searches run on worker threads."""

    def __init__(self, store: ConversationStore, group_said: GroupSaid | None = None, *, follow: bool = True) -> None:
        """`follow`: be told which chats change (for an index searched again; a one-off search need not)."""
        self.store = store
        self.group_said = group_said
        self._lock = threading.Lock()
        self._chats: dict[str, _Chat] = {}
        self._ordered: list[_Chat] = []  # most recent first, as the sidebar lists them
        self._said: dict[str, _Said] = {}
        self._unsure: set[str] = set()  # chats whose transcript is to be checked before it is searched again
        self._changes: ChatChanges | None = None
        self._tried = not follow  # to open `_changes` (once the conversations folder exists)
        self._listed = False  # every chat looked at since `_changes` opened

    def warm(self) -> None:
        """Read every chat not read yet (the first search's cost, paid before it)."""
        with self._lock:
            self._refresh()
            for chat in self._ordered:
                self._said_by(chat.conversation.id)

    def search(self, query: str, limit: int = 20) -> list[Hit]:
        """Conversations whose title or messages contain `query` (case-insensitive), most recent first."""
        needle = query.strip().lower()
        if not needle:
            return []
        hits: list[Hit] = []
        with self._lock:
            self._refresh()
            for chat in self._ordered:
                conversation = chat.conversation
                if needle in chat.title:
                    hits.append(Hit(conversation, conversation.title))
                else:
                    found = _found(self._said_by(conversation.id), needle)
                    if found is not None:
                        hits.append(Hit(conversation, *found))
                if len(hits) >= limit:
                    break
        return hits

    def _refresh(self) -> None:
        """The chats as `store.recent()` lists them: the changed ones read again, or all looked at when which
        changed is not known (the first time, no inotify here, or too many changes at once)."""
        if not self._tried and self.store.root.is_dir():
            self._tried = True
            self._changes = ChatChanges.open(self.store.root)  # before reading: nothing written after is missed
        changed = self._changes.take() if self._changes is not None and self._listed else None
        if changed is None:
            self._list_all()
            return
        for chat_id in changed:
            folder = self.store.root / chat_id
            conversation = listed_one(folder / "meta.json")
            if conversation is None:  # deleted or moved to the recycle bin: forgotten
                self._chats.pop(chat_id, None)
                self._said.pop(chat_id, None)
            else:
                self._chats[chat_id] = _Chat(_stamp(folder), conversation)
            self._unsure.add(chat_id)
        if changed:
            self._order()

    def _list_all(self) -> None:
        """Every chat looked at: its metadata read again only when its folder changed (meta.json is replaced by a
        rename in it: the folder's time moves; a transcript's append leaves it)."""
        seen: dict[str, _Chat] = {}
        try:
            entries = list(os.scandir(self.store.root))
        except FileNotFoundError:
            entries = []
        for entry in entries:
            if self._changes is not None:
                self._changes.watch(entry.name)
            stamp = _stamp(Path(entry.path))
            known = self._chats.get(entry.name)
            if known is not None and known.stamp == stamp:
                seen[entry.name] = known
                continue
            conversation = listed_one(Path(entry.path) / "meta.json")
            if conversation is not None:
                seen[entry.name] = _Chat(stamp, conversation)
        self._chats = seen
        for gone in self._said.keys() - seen.keys():  # deleted: forgotten
            del self._said[gone]
        self._unsure = set(seen)
        self._listed = self._changes is not None
        self._order()

    def _order(self) -> None:
        self._ordered = sorted(
            self._chats.values(), key=lambda c: (c.conversation.pinned, c.conversation.updated), reverse=True
        )

    def _said_by(self, conversation_id: str) -> _Said:
        known = self._said.get(conversation_id)
        if known is not None and conversation_id not in self._unsure:
            return known
        self._unsure.discard(conversation_id)
        path = self.store.root / conversation_id / "messages.jsonl"
        try:
            info = path.stat()
            signature: tuple[int, int] | None = (info.st_size, info.st_mtime_ns)
        except FileNotFoundError:
            signature = None
        if known is not None and known.signature == signature:
            return known
        said = _Said(signature)
        if signature is not None:
            pairs = self.group_said(conversation_id) if self.group_said is not None else None
            if pairs is None:  # one agent: its transcript
                session, _ = load(path, write_back=False)
                pairs = [
                    (m.id, "".join(getattr(b, "text", "") for b in m.content))
                    for m in session.messages()
                    if isinstance(m, UserMessage | AssistantMessage)
                ]
            folded: list[str] = []
            at = 0
            for message_id, text in pairs:
                said.ids.append(message_id)
                said.texts.append(text)
                said.starts.append(at)
                folded.append(text.lower())
                at += len(folded[-1]) + 1
            said.folded = "\x00".join(folded)
        self._said[conversation_id] = said
        return said


def _found(said: _Said, needle: str) -> tuple[str, str] | None:
    """The snippet around the first match, and that message's id."""
    at = said.folded.find(needle)
    if at < 0:
        return None
    index = bisect.bisect_right(said.starts, at) - 1
    text = said.texts[index]
    start = max(text.lower().find(needle), 0)
    return text[max(0, start - SNIPPET_CONTEXT) : start + len(needle) + SNIPPET_CONTEXT], said.ids[index]

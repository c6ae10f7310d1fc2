"""What a view draws on opening a conversation (a `Snapshot`), mixed into the runtime: the history, and the event
to stream after, so that nothing shows twice and nothing is missed — while a run goes, here or in another
process (a terminal's `orkas run`), the history stops where the run began and its events are replayed.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from orkas.adapter.conversations.pages import PAGE, Page, read_page, tail
from orkas.adapter.conversations.store import ConversationStore
from orkas.adapter.conversations.streams import Streams
from orkas.adapter.conversations.transcript import LoadReport
from orkas.adapter.conversations.turns import Active, Groups
from orkas.core.errors import ConfigError
from orkas.engine.messages import Message


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a view draws on opening a conversation: the history, and the event to stream after."""

    messages: Sequence[Message]
    after: int
    running: bool
    report: LoadReport | None
    unsent: list[dict[str, Any]] = field(default_factory=list)  # not sent (no provider): resend or discard
    group: list[dict[str, Any]] | None = None  # a group conversation's bus records (then `messages` is empty)
    older: str = ""  # paged (`opened` with a limit): the first message's id when earlier ones exist


class Snapshots:
    """What the runtime it is mixed into provides, for the type checker."""

    store: ConversationStore
    streams: Streams
    active: dict[str, Active]
    groups: Groups | None

    def snapshot(self, conversation_id: str) -> Snapshot:
        """The history to draw and the sequence number to stream after, so that nothing shows twice and
        nothing is missed: while a run is going, the history stops where the run began and its events
        are replayed (a live reply survives a reload)."""
        active = self.active.get(conversation_id)
        if self._is_group(conversation_id):
            return self._group_snapshot(conversation_id, active)
        session, report = self.store.session(conversation_id, write_back=active is None)  # a live run owns it
        session.close()
        return self._snapshot(conversation_id, session.messages(), report, active)

    def _is_group(self, conversation_id: str) -> bool:
        return self.groups is not None and self.groups.is_group(conversation_id)

    def _group_snapshot(self, conversation_id: str, active: Active | None) -> Snapshot:
        assert self.groups is not None
        unsent = self.store.unsent(conversation_id)
        if active is not None:
            records = self.groups.history(conversation_id, active.history_length)
            return Snapshot((), active.start_seq, True, None, unsent, group=records)
        records = self.groups.history(conversation_id)
        return Snapshot((), self.streams.last_seq(conversation_id), False, None, unsent, group=records)

    async def opened(self, conversation_id: str, limit: int | None = None) -> Snapshot:
        """`snapshot`, read off the event loop; with a `limit`, only the newest page of a one-agent conversation's
        history (pages.py; `earlier` gives the pages before it). An idle conversation's page is read from the end of
        its transcript without parsing the rest; one a run owns is loaded whole, as the run sees it, then cut."""
        if limit is None:
            return await self._opened_whole(conversation_id)
        if await asyncio.to_thread(self._is_group, conversation_id):
            return await self._opened_whole(conversation_id)  # a group's history is its bus: not paged
        newest = await self._newest(conversation_id, limit)
        if newest is not None:
            return newest
        whole = await self._opened_whole(conversation_id)
        page = tail(whole.messages, limit)
        return replace(whole, messages=page.messages, older=page.older)

    async def earlier(self, conversation_id: str, before: str, limit: int = PAGE) -> Page:
        """The page of a one-agent conversation's history before message `before` (empty when it is gone)."""
        if await asyncio.to_thread(self._is_group, conversation_id):
            raise ConfigError("a group conversation's history is not paged")
        await asyncio.to_thread(self.store.get, conversation_id)  # NotFound for an unknown one
        path = self.store.transcript_path(conversation_id)
        return await asyncio.to_thread(read_page, path, before=before, limit=limit)

    async def _newest(self, conversation_id: str, limit: int) -> Snapshot | None:
        """An idle conversation's newest page and the point to stream after; None when a run owns it (here or in
        another process) or one started or ended meanwhile: then it is loaded whole."""
        seq = self.streams.last_seq(conversation_id)
        if self.active.get(conversation_id) is not None:
            return None
        read = await asyncio.to_thread(self._read_newest, conversation_id, limit)
        moved = self.active.get(conversation_id) is not None or self.streams.last_seq(conversation_id) != seq
        if read is None or moved:
            return None
        page, unsent = read
        return Snapshot(page.messages, seq, False, None, unsent, older=page.older)

    def _read_newest(self, conversation_id: str, limit: int) -> tuple[Page, list[dict[str, Any]]] | None:
        path = self.store.transcript_path(conversation_id)
        if not path.exists() or self.store.running_elsewhere(conversation_id):
            return None
        return read_page(path, limit=limit), self.store.unsent(conversation_id)

    async def _opened_whole(self, conversation_id: str) -> Snapshot:
        """`snapshot`, with the transcript read on a worker thread: a view opening a long conversation
        must not stall the others' streams. Read again if a run started or ended meanwhile, so the
        history and the replay point always belong together."""
        if await asyncio.to_thread(self._is_group, conversation_id):
            active = self.active.get(conversation_id)
            if active is not None and active.history_length is None:
                return self.snapshot(conversation_id)
            return await asyncio.to_thread(self._group_snapshot, conversation_id, active)
        for _ in range(3):
            active = self.active.get(conversation_id)
            seq = self.streams.last_seq(conversation_id)
            load = functools.partial(self.store.session, conversation_id, write_back=active is None)
            session, report = await asyncio.to_thread(load)
            session.close()
            same_run = self.active.get(conversation_id) is active
            if same_run and (active is not None or self.streams.last_seq(conversation_id) == seq):
                return self._snapshot(conversation_id, session.messages(), report, active)
        return self.snapshot(conversation_id)  # runs keep starting and ending: read it on the loop once

    def _snapshot(
        self, conversation_id: str, messages: Sequence[Message], report: LoadReport | None, active: Active | None
    ) -> Snapshot:
        if active is not None:
            # Until the run has loaded its transcript nothing of it is written: all of it is history.
            shown = messages if active.history_length is None else messages[: active.history_length]
            return Snapshot(shown, active.start_seq, True, report, self.store.unsent(conversation_id))
        if self.store.running_elsewhere(conversation_id):  # a terminal's run: replayed from its start, as ours
            self.streams.catch_up(conversation_id)  # (its question waiting, its Stop: a view opened late saw neither)
            start, message_id = self.streams.run_start(conversation_id)
            cut = next((i for i, m in enumerate(messages) if m.id == message_id), len(messages))
            return Snapshot(messages[:cut], start, True, report, self.store.unsent(conversation_id))
        after = self.streams.last_seq(conversation_id)
        return Snapshot(messages, after, False, report, self.store.unsent(conversation_id))

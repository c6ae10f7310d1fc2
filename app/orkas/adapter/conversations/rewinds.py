"""Rewind from any of the person's messages: "conversation and files", "conversation only" or "files only", as
Claude Code's rewind menu offers — but the files include what shell commands changed (checkpoints.py).

A mixin of `ConversationRuntime`. The conversation goes back to before that message: the message and what followed
are put aside as a version (branches.py), so a rewind is undone by switching back to it; the files go back to the
checkpoint taken before that message ran, and the checkpoint of how they were just before the rewind undoes that.
A group conversation rewinds its files only (its log has no versions). Nothing runs meanwhile: the run lock is held.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from orkas.adapter.conversations.checkpoints import Checkpoints, group_effects, outside_effects
from orkas.adapter.conversations.store import ConversationStore
from orkas.adapter.conversations.turns import Active, Groups, text_of
from orkas.adapter.conversations.versions import typed
from orkas.adapter.wire import HistoryChanged, ProductEvent
from orkas.core.errors import ConfigError, NotFound
from orkas.engine.messages import Message, UserMessage

Mode = Literal["both", "files", "conversation"]
MODES: tuple[Mode, ...] = ("both", "files", "conversation")


class Rewinds:
    """What the runtime it is mixed into provides, for the type checker."""

    store: ConversationStore
    active: dict[str, Active]
    checkpoints: Checkpoints | None
    groups: Groups | None

    if TYPE_CHECKING:

        def publish(self, conversation_id: str, event: ProductEvent, actor: str | None = None) -> object: ...

        async def switch_version(self, conversation_id: str, after: str, index: int) -> None: ...

        def _idle(self, conversation_id: str) -> None: ...

        def _is_group(self, conversation_id: str) -> bool: ...

    def checkpoint_list(self, conversation_id: str) -> list[dict[str, Any]]:
        """The person's messages a rewind can start from, newest last: when, what they said, the files kept."""
        self.store.get(conversation_id)
        texts = _texts(self._history(conversation_id, self._is_group(conversation_id)))
        kept = {k.message_id: k for k in reversed(self._checkpoints().listed(conversation_id))}  # the first per message
        out = []
        for message_id, text in texts.items():
            k = kept.get(message_id)
            out.append(
                {
                    "message_id": message_id,
                    "text": text,
                    "checkpoint": k.checkpoint if k else None,
                    "at": k.at if k else None,
                    "files": k.files if k else None,
                    "new_bytes": k.new_bytes if k else None,
                    "left_out": k.left_out if k else 0,
                }
            )
        return out

    async def rewind_preview(self, conversation_id: str, message_id: str, mode: Mode) -> dict[str, Any]:
        """What a rewind would do, said before it is done (nothing changes)."""
        self._idle(conversation_id)
        return await asyncio.to_thread(self._rewind, conversation_id, message_id, mode, False)

    async def rewind(self, conversation_id: str, message_id: str, mode: Mode) -> dict[str, Any]:
        self._idle(conversation_id)
        held = self.store.hold_run(conversation_id)  # no run starts here or in a terminal meanwhile
        try:
            said = await asyncio.to_thread(self._rewind, conversation_id, message_id, mode, True)
            if mode != "files":
                said["conversation"] = await self._fork_at(conversation_id, message_id)
        finally:
            held.release()
        if mode != "files":
            self.publish(conversation_id, HistoryChanged())
        return said

    async def undo_rewind(
        self,
        conversation_id: str,
        before: str | None = None,
        after: str | None = None,
        index: int | None = None,
        *,
        preview: bool = False,
    ) -> dict[str, Any]:
        """A rewind taken back: its files (the rewind whose checkpoint of "just before" is `before`, else the last),
        and its conversation when `after`/`index` name the version it put aside (what was said since is put aside
        in turn: nothing is lost)."""
        self._idle(conversation_id)
        said: dict[str, Any] = {"applied": not preview}
        if preview:
            done = await asyncio.to_thread(self._checkpoints().undo, conversation_id, before, apply=False)
            return {**said, "files": done.as_json()}
        if before is not None or after is None:
            held = self.store.hold_run(conversation_id)
            try:
                done = await asyncio.to_thread(self._checkpoints().undo, conversation_id, before)
            finally:
                held.release()
            said["files"] = done.as_json()
        if after is not None and index is not None:
            await self.switch_version(conversation_id, after, index)
            said["conversation"] = {"after": after, "index": index}
        return said

    def _rewind(self, conversation_id: str, message_id: str, mode: Mode, apply: bool) -> dict[str, Any]:
        if mode not in MODES:
            raise ConfigError(
                f"rewind the conversation and files, the conversation only or the files only — not {mode!r}"
            )
        group = self._is_group(conversation_id)
        if group and mode != "files":
            raise ConfigError("a group conversation rewinds its files only (its messages have no versions)")
        history = self._history(conversation_id, group)
        texts = _texts(history)
        if message_id not in texts:
            raise NotFound("that message is not one of yours in this conversation")
        after = _from(history, message_id)
        conversation = self.store.get(conversation_id)
        said: dict[str, Any] = {"message_id": message_id, "text": texts[message_id], "mode": mode, "applied": apply}
        if mode != "conversation":
            checkpoints = self._checkpoints()
            kept, done = (checkpoints.rewind if apply else checkpoints.preview)(conversation_id, message_id)
            said["files"] = done.as_json()
            said["checkpoint"] = {"id": kept.checkpoint, "at": kept.at, "workspace": kept.workspace}
            if group:
                said["warnings"] = group_effects(after, conversation.granted)
            else:
                workspace = conversation.workspace_path.resolve()
                said["warnings"] = outside_effects(after, workspace, conversation.granted)
        if mode != "files" and not apply:
            said["conversation"] = {"put_aside": len(after)}
        return said

    async def _fork_at(self, conversation_id: str, message_id: str) -> dict[str, Any]:
        """The conversation as it was before the message: it and what followed put aside as a version."""
        session, _ = await asyncio.to_thread(self.store.session, conversation_id)
        try:
            messages = session.messages()
            at = next(i for i, m in enumerate(messages) if m.id == message_id)
            branches = self.store.branches(conversation_id)
            await session.rewrite(branches.fork(messages, at))
            after = messages[at - 1].id if at else ""
            # Where the put-aside version stands among its fork point's versions: the undo switches back to it.
            return {"put_aside": len(messages) - at, "after": after, "index": branches.put_aside_last(after)}
        finally:
            session.close()

    def _history(self, conversation_id: str, group: bool) -> list[Message] | list[dict[str, Any]]:
        """A group's log records, or a one-agent conversation's transcript: read once per rewind."""
        if group:
            assert self.groups is not None
            return self.groups.history(conversation_id)
        session, _ = self.store.session(conversation_id)
        try:
            return list(session.messages())
        finally:
            session.close()

    def _checkpoints(self) -> Checkpoints:
        if self.checkpoints is None:
            raise ConfigError("checkpoints are not kept here")
        return self.checkpoints


def _id(item: Message | dict[str, Any]) -> str:
    return str(item["id"]) if isinstance(item, dict) else item.id


def _texts(history: Sequence[Message | dict[str, Any]]) -> dict[str, str]:
    """The person's own messages, by id, oldest first: a group's records from "user", or the typed user messages."""
    texts: dict[str, str] = {}
    for item in history:
        if isinstance(item, dict):
            if item.get("from") == "user":
                texts[str(item["id"])] = str(item.get("text") or "")
        elif isinstance(item, UserMessage) and typed(item):
            texts[item.id] = text_of(item)
    return texts


def _from(history: Sequence[Message | dict[str, Any]], message_id: str) -> list[Any]:
    """The message and what followed it."""
    at = next((i for i, item in enumerate(history) if _id(item) == message_id), len(history))
    return list(history[at:])

"""Versions of a one-agent conversation: edit a message and resend it, ask for another answer (or a retry), and
switch between the versions these put aside (branches.py keeps them; nothing is ever lost).

A mixin of `ConversationRuntime`: it forks the transcript where the person points, then starts a run as `send`
does, and says `history_changed` so every view draws the history again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from orkas.adapter.conversations.attachments import Attachment
from orkas.adapter.conversations.store import Conversation, ConversationStore
from orkas.adapter.conversations.turns import Active, text_of
from orkas.adapter.wire import HistoryChanged, ProductEvent, TitleChanged
from orkas.core.errors import ConfigError, NotFound
from orkas.engine.messages import AttachmentBlock, Message, TextBlock, ToolResultBlock, UserMessage

WRITE_UP_SECONDS = 5.0  # the longest an edit or a Retry waits for a finished run to write up


class Versions:
    """What the runtime it is mixed into provides, for the type checker."""

    store: ConversationStore
    active: dict[str, Active]

    if TYPE_CHECKING:

        def publish(self, conversation_id: str, event: ProductEvent, actor: str | None = None) -> object: ...

        def _is_group(self, conversation_id: str) -> bool: ...

        def _signal(self, conversation_id: str, *, edits: int = 0, another_answer: int = 0) -> None: ...

        def _start(
            self, conversation: Conversation, message: UserMessage, files: list[Attachment]
        ) -> dict[str, Any]: ...

    async def edit(self, conversation_id: str, message_id: str, text: str) -> dict[str, Any]:
        """Send `text` in place of message `message_id` (its files kept): the conversation continues from
        the edit, and what followed the old message stays reachable as another version."""
        original, first = await self._fork(conversation_id, message_id)
        if first:
            self._follow_first_prompt(conversation_id, text)
        self._signal(conversation_id, edits=1)
        kept = tuple(b for b in original.content if not isinstance(b, TextBlock))
        return self._restart(conversation_id, UserMessage(content=(TextBlock(text=text), *kept)))

    async def regenerate(self, conversation_id: str, message_id: str) -> dict[str, Any]:
        """Answer message `message_id` again (another answer, or a retry after an error); the previous
        answer stays reachable as another version."""
        original, _ = await self._fork(conversation_id, message_id, answer=True)
        self._signal(conversation_id, another_answer=1)
        return self._restart(conversation_id, UserMessage(id=original.id, content=original.content))

    async def switch_version(self, conversation_id: str, after: str, index: int) -> None:
        await self._written_up(conversation_id)
        self._idle_single(conversation_id)
        session, _ = await asyncio.to_thread(self.store.session, conversation_id)
        try:
            was = _first_prompt(session.messages())
            messages = self.store.branches(conversation_id).switch(session.messages(), after, index)
            await session.rewrite(messages)
        finally:
            session.close()
        self.publish(conversation_id, HistoryChanged())
        now = _first_prompt(messages)
        if now is not None and (was is None or now.id != was.id):  # another version of the first message
            self._follow_first_prompt(conversation_id, text_of(now))

    def versions(self, conversation_id: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
        return [asdict(v) for v in self.store.branches(conversation_id).shown(messages)]

    async def _fork(self, conversation_id: str, message_id: str, *, answer: bool = False) -> tuple[UserMessage, bool]:
        """`answer`: fork after the message (a version of its answer), else at it (a version of the prompt).
        Returns the message, and whether it is the first the person wrote in the chat."""
        await self._written_up(conversation_id)
        self._idle_single(conversation_id)
        session, _ = await asyncio.to_thread(self.store.session, conversation_id)
        try:
            messages = session.messages()
            at = next((i for i, m in enumerate(messages) if m.id == message_id), None)
            original = messages[at] if at is not None else None
            if not isinstance(original, UserMessage) or not typed(original):
                raise NotFound("that message is not in this conversation (an older part may have been summarized)")
            assert at is not None
            first = _first_prompt(messages) is original
            branches = self.store.branches(conversation_id)
            await session.rewrite(branches.fork_answer(messages, at) if answer else branches.fork(messages, at))
        finally:
            session.close()
        self.publish(conversation_id, HistoryChanged())
        return original, first

    def _follow_first_prompt(self, conversation_id: str, text: str) -> None:
        """The title follows a new first message, when the app made it (store.py `follow_first_prompt`)."""
        if (retitled := self.store.follow_first_prompt(conversation_id, text)) is not None:
            self.publish(conversation_id, TitleChanged(title=retitled.title))

    async def _written_up(self, conversation_id: str) -> None:
        """A run whose answer (or error) was already shown is only writing up (its notes, the title, the lock): an
        edit or a Retry pressed in that moment waits for it rather than being refused as a reply still written."""
        active = self.active.get(conversation_id)
        if active is not None and active.ended and active.task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(active.task), WRITE_UP_SECONDS)

    def _idle(self, conversation_id: str) -> None:
        """No run goes in the conversation, here or in another process (else a sentence saying so)."""
        self.store.get(conversation_id)  # NotFound first
        if conversation_id in self.active:
            raise ConfigError("a reply is still being written: wait for it or stop it first")
        self.store.hold_run(conversation_id).release()  # ConversationBusy: running in another process

    def _idle_single(self, conversation_id: str) -> None:
        self._idle(conversation_id)
        if self._is_group(conversation_id):
            raise ConfigError("a group conversation's messages cannot be edited or answered again")

    def _restart(self, conversation_id: str, message: UserMessage) -> dict[str, Any]:
        conversation = self.store.get(conversation_id)
        files = [
            Attachment(id="", name=b.name, size=b.size, media_type=b.media_type, path=b.path, in_place=False)
            for b in message.content
            if isinstance(b, AttachmentBlock)
        ]
        return self._start(conversation, message, files)


def _first_prompt(messages: Sequence[Message]) -> UserMessage | None:
    return next((m for m in messages if isinstance(m, UserMessage) and typed(m)), None)


def typed(message: UserMessage) -> bool:
    """A message the person wrote (not the tool results the transcript also keeps as user messages)."""
    return any(isinstance(b, TextBlock | AttachmentBlock) for b in message.content) and not any(
        isinstance(b, ToolResultBlock) for b in message.content
    )

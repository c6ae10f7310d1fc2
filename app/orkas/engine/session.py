"""The session protocol and its in-memory implementation.

A session owns one history and guards the pairing invariant on every append: an assistant message
with tool calls must be followed by a user message whose leading blocks are exactly those calls'
results, in declared order; a tool result may appear nowhere else. App-only notices may sit
anywhere, except between a tool call and its results.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Protocol

from orkas.core.errors import PairingError
from orkas.engine.messages import AssistantMessage, Message, ToolResultBlock, UserMessage


class Session(Protocol):
    @property
    def id(self) -> str: ...

    def messages(self) -> Sequence[Message]:
        """The history, oldest first. The caller must not mutate it."""
        ...

    async def append(self, message: Message) -> None:
        """Add one message. Raises `PairingError` (and keeps nothing) if it would break pairing;
        a persistent session raises `OSError` if the write failed."""
        ...

    async def rewrite(self, messages: Sequence[Message]) -> None:
        """Replace the whole history (compaction). Raises `PairingError` if `messages` break pairing."""
        ...

    async def save_output(self, text: str) -> str:
        """Keep a full tool output that compaction cut down; returns a reference a person can follow."""
        ...


def pending_tool_ids(history: Sequence[Message]) -> tuple[str, ...]:
    """Ids of tool calls in the last LLM message still waiting for their results."""
    for message in reversed(history):
        if isinstance(message, AssistantMessage):
            return tuple(b.id for b in message.tool_uses)
        if isinstance(message, UserMessage):
            return ()
    return ()


def check_append(history: Sequence[Message], message: Message) -> None:
    """Raise `PairingError` if appending `message` to `history` breaks the pairing invariant."""
    pending = pending_tool_ids(history)
    if isinstance(message, UserMessage):
        results = [b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)]
        leading = [b.tool_use_id for b in message.content[: len(results)] if isinstance(b, ToolResultBlock)]
        if list(pending) != results or leading != results:
            if pending:
                raise PairingError(
                    f"tool calls {list(pending)!r} need their results first, in that order; got {results!r}"
                )
            raise PairingError(f"tool results {results!r} answer no pending tool call")
    elif isinstance(message, AssistantMessage):
        if pending:
            raise PairingError(f"tool calls {list(pending)!r} are still waiting for results")
        ids = [b.id for b in message.tool_uses]
        if len(set(ids)) != len(ids):
            raise PairingError(f"duplicate tool call ids in one message: {ids!r}")
    elif pending:
        raise PairingError(f"a notice cannot come between tool calls {list(pending)!r} and their results")


def check_history(messages: Sequence[Message]) -> None:
    """Raise `PairingError` unless the whole sequence could have been appended one by one."""
    for index in range(len(messages)):
        check_append(messages[:index], messages[index])


class InMemorySession:
    """A session held in a list. Enforces pairing; persists nothing."""

    def __init__(self, session_id: str | None = None, history: Sequence[Message] = ()) -> None:
        self._id = session_id or uuid.uuid4().hex
        check_history(history)
        self._messages: list[Message] = list(history)
        self.outputs: dict[str, str] = {}

    @property
    def id(self) -> str:
        return self._id

    def messages(self) -> Sequence[Message]:
        return self._messages

    async def append(self, message: Message) -> None:
        check_append(self._messages, message)
        self._messages.append(message)

    async def rewrite(self, messages: Sequence[Message]) -> None:
        check_history(messages)
        self._messages = list(messages)

    async def save_output(self, text: str) -> str:
        ref = f"output:{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        self.outputs[ref] = text
        return ref

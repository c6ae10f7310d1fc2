"""A run of a conversation: one turn loop, over two runners — one agent, or a group.

`run` takes the person's message through the runner, then every message they sent while it was busy that did
not join it as a steer (queued: the next turn, never lost; given back when they stopped the run). The runner
says how a turn goes: `Solo` loads the transcript once and runs the conversation's agent over it; `GroupTurn`
hands the message to the team (team/conversations.py), which publishes each actor's events.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from orkas.adapter.conversations.attachments import Attachment
from orkas.adapter.conversations.sessions import PersistentSession
from orkas.adapter.conversations.store import Conversation, ConversationStore
from orkas.adapter.wire import (
    AttachmentShown,
    GroupStart,
    PermissionAnswered,
    ProductEvent,
    QueuedApplied,
    QueuedDropped,
    UserMessageShown,
    run_failed,
)
from orkas.core.errors import ConfigError, OrkasError
from orkas.core.fsutil import HeldLock
from orkas.engine.abort import AbortSignal
from orkas.engine.budget import Budget
from orkas.engine.consent import Permissions
from orkas.engine.events import Done, Error, PermissionRequest, RunStart, ToolEnd
from orkas.engine.messages import AttachmentBlock, Message, Notice, TextBlock, UserMessage
from orkas.engine.runner import Agent
from orkas.engine.session import Session, pending_tool_ids
from orkas.engine.steer import SteerQueue

log = logging.getLogger(__name__)

APPROVAL = "approval"  # a Notice: a question the run asked and how it was answered
Publish = Callable[[ProductEvent, str | None], None]


@dataclass
class Active:
    """A conversation's run while it goes: how to stop it, steer it and answer it."""

    signal: AbortSignal
    steer: SteerQueue
    permissions: Permissions
    budget: Budget | None = None
    task: asyncio.Task[None] | None = None
    start_seq: int = 0  # the last event before this run: a view joining mid-run replays from here
    history_length: int | None = None  # messages in the history when the run started (None: not loaded yet)
    held: HeldLock | None = None  # the conversation's run lock (store.hold_run), across processes
    ended: bool = False  # its last turn said done or error: what follows is writing up (a Retry may wait for it)


class Groups(Protocol):
    """The group chat, as the runtime sees it (team/conversations.py implements it; the adapter layer does not
    import the team layer)."""

    def is_group(self, conversation_id: str) -> bool: ...

    def check(self, conversation: Conversation) -> None: ...

    def history(self, conversation_id: str, limit: int | None = None) -> list[dict[str, Any]]: ...

    def size(self, conversation_id: str) -> int: ...

    def members(self, conversation_id: str) -> dict[str, Any]: ...

    def as_messages(self, conversation_id: str) -> list[Message]: ...

    async def run(
        self,
        conversation: Conversation,
        text: str,
        *,
        attachments: Sequence[dict[str, Any]],
        signal: AbortSignal,
        steer: SteerQueue,
        permissions: Permissions,
        budget: Budget | None,
        publish: Publish,
        answered: Callable[[PermissionRequest], dict[str, str | int] | None],
        message_id: str | None = None,
    ) -> bool: ...


class Runner(Protocol):
    """How one conversation's turns go. `start` raises `ConfigError` when nothing can be sent (no provider, a
    bad model): the message is then kept as not sent."""

    first_answer: str | None  # a new chat's first answer (its title's source), when there was one
    actor: str | None  # whose the conversation's own events are (the person's message, idle): a group's "group"

    async def start(self, active: Active) -> None: ...

    async def turn(self, message: UserMessage, files: Sequence[Attachment], active: Active) -> None: ...

    async def history(self) -> Sequence[Message]: ...

    async def next_turn(self, active: Active, last_seq: int) -> None: ...

    async def close(self) -> None: ...


class Solo:
    """One agent — Orkas, or the named agent the chat is bound to — over the conversation's transcript."""

    actor: str | None = None

    def __init__(
        self,
        store: ConversationStore,
        conversation: Conversation,
        make_agent: Callable[[Conversation], Agent],
        publish: Publish,
        answered: Callable[[str], PermissionAnswered | None] = lambda question_id: None,
    ) -> None:
        self.store = store
        self.conversation = conversation
        self.make_agent = make_agent
        self.publish = publish
        self.answered = answered  # what closed a question (any view's answer, an expiry, a Stop)
        self.session: PersistentSession | None = None
        self.agent: Agent | None = None
        self.first_answer: str | None = None
        self._new = False

    async def start(self, active: Active) -> None:
        # Off the event loop: loading a long transcript, and building the agent (the first one opens the knowledge
        # base and its model), must not stall the other conversations' streams.
        session, _ = await asyncio.to_thread(self.store.session, self.conversation.id)  # loaded once per run
        self.session = session
        active.history_length = len(session.messages())
        self._new = active.history_length == 0
        self.agent = await asyncio.to_thread(self.make_agent, self.conversation)

    async def turn(self, message: UserMessage, files: Sequence[Attachment], active: Active) -> None:
        assert self.agent is not None and self.session is not None
        active.ended = False
        asked: dict[str, PermissionRequest] = {}  # by the tool call that asks
        # Answered, and kept once the transcript may take a notice: not between a tool call and its result.
        closed: list[PermissionRequest] = []
        async for event in self.agent.run(
            message,
            session=self.session,
            signal=active.signal,
            steer=active.steer,
            permissions=active.permissions,
            budget=active.budget,
        ):
            self.publish(event, None)
            if isinstance(event, RunStart):  # the views say so before the turn's setup (the skills' scan) begins
                await asyncio.sleep(0)
            if isinstance(event, PermissionRequest):
                asked[event.tool_use_id] = event
            elif isinstance(event, ToolEnd) and event.id in asked:
                closed.append(asked.pop(event.id))
            if closed and not pending_tool_ids(self.session.messages()):
                for request in closed:
                    await self._approval(request)
                closed.clear()
            if isinstance(event, Done) and self._new and self.first_answer is None:
                self.first_answer = event.text
            if isinstance(event, Done | Error):
                active.ended = True
                self.store.touch(self.conversation, text_of(message))
            if isinstance(event, Error):  # a reloaded view shows the same marker
                facts: dict[str, str | int] = {"error": event.kind, "cause": event.cause, "attempts": event.attempts}
                await _note(self.session, "stopped" if event.aborted else "error", event.message, facts)
        for request in [*closed, *asked.values()]:  # and those closed with no tool run (a Stop while it waited)
            await self._approval(request)

    async def _approval(self, request: PermissionRequest) -> None:
        """The question and its answer, kept in the transcript: a reload shows the card as it was answered (what
        was asked, what was decided, by whom), above the tool call it allowed or refused."""
        given = self.answered(request.id)
        if given is None or self.session is None:
            return
        await _note(self.session, APPROVAL, request.preview, approval_facts(request, given))

    async def history(self) -> Sequence[Message]:
        return list(self.session.messages()) if self.session is not None else []

    async def next_turn(self, active: Active, last_seq: int) -> None:
        return None  # one run: a view joining later replays all of it over the history it started from

    async def close(self) -> None:
        if self.session is not None:
            self.session.close()
        if self.agent is not None:
            await self.agent.providers.aclose()


class GroupTurn:
    """The commander and its members: the team runs the turn and publishes each actor's events."""

    first_answer: str | None = None
    actor: str | None = "group"

    def __init__(
        self,
        groups: Groups,
        store: ConversationStore,
        conversation: Conversation,
        publish: Publish,
        answered: Callable[[str], PermissionAnswered | None] = lambda question_id: None,
    ) -> None:
        self.groups = groups
        self.store = store
        self.conversation = conversation
        self.publish = publish
        self.answered = answered  # as Solo's: kept on the asking bubble's tool trail, so a reload shows the card

    def _approval(self, request: PermissionRequest) -> dict[str, str | int] | None:
        given = self.answered(request.id)
        # What was asked goes with it: a one-agent chat keeps it as the notice's text, a bus trail step has no text.
        return {**approval_facts(request, given), "preview": request.preview} if given is not None else None

    async def start(self, active: Active) -> None:
        active.history_length = await asyncio.to_thread(self.groups.size, self.conversation.id)
        await asyncio.to_thread(self.groups.check, self.conversation)

    async def turn(self, message: UserMessage, files: Sequence[Attachment], active: Active) -> None:
        group = await asyncio.to_thread(self.groups.members, self.conversation.id)
        self.publish(GroupStart(members=tuple(group["members"]), floor=group["floor"]), self.actor)
        await self.groups.run(
            self.conversation,
            text_of(message),
            attachments=[asdict(shown(a)) for a in files],
            signal=active.signal,
            steer=active.steer,
            permissions=active.permissions,
            budget=active.budget,
            publish=self.publish,
            answered=self._approval,
            message_id=message.id,
        )
        self.store.touch(self.conversation, text_of(message))

    async def history(self) -> Sequence[Message]:
        return await asyncio.to_thread(self.groups.as_messages, self.conversation.id)

    async def next_turn(self, active: Active, last_seq: int) -> None:
        active.history_length = await asyncio.to_thread(self.groups.size, self.conversation.id)
        active.start_seq = last_seq

    async def close(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Loop:
    """What the turn loop needs of the runtime around it."""

    publish: Callable[[ProductEvent], object]
    watch: Callable[[str], None]  # count this message's runs for learning (self-evolution)
    after_turn: Callable[[Sequence[Message]], Any]  # awaitable: the past-conversations index, off the loop
    not_sent: Callable[[UserMessage, Sequence[Attachment], ConfigError], None]
    last_seq: Callable[[], int]
    said_first: Callable[[], ProductEvent | None] = lambda: None  # after the message: the instructions in force
    before_turn: Callable[[UserMessage], Awaitable[None]] | None = None  # the workspace's checkpoint


async def run(runner: Runner, loop: Loop, message: UserMessage, files: Sequence[Attachment], active: Active) -> None:
    """The person's message through the runner, then what they queued meanwhile; a bug still ends it visibly."""
    try:
        await runner.start(active)
    except ConfigError as e:  # nothing was sent: kept for a resend
        await runner.close()
        loop.not_sent(message, files, e)
        return
    try:
        loop.publish(message_shown(message, files=files))
        if (said := loop.said_first()) is not None:
            loop.publish(said)
        while True:
            loop.watch(text_of(message))
            if loop.before_turn is not None:
                await loop.before_turn(message)
            await runner.turn(message, files, active)
            await loop.after_turn(await runner.history())
            left = active.steer.drain()
            if left and active.signal.aborted:  # stopped: say so, so the view gives the words back
                loop.publish(QueuedDropped(message_ids=tuple(m.id for m in left)))
            if not left or active.signal.aborted:
                return
            # Sent while the run was finishing: the next turn (shown once: the queued bubbles become it).
            message = left[0] if len(left) == 1 else UserMessage(content=tuple(b for m in left for b in m.content))
            files = ()
            queued_ids = tuple(m.id for m in left)
            loop.publish(QueuedApplied(message_ids=queued_ids, message_id=message.id))
            loop.publish(message_shown(message, from_queued=queued_ids))
            await runner.next_turn(active, loop.last_seq())
    except Exception:
        log.exception("a conversation's run failed")
        loop.publish(run_failed("internal", "the run failed unexpectedly"))
    finally:
        await runner.close()


def approval_facts(request: PermissionRequest, given: PermissionAnswered) -> dict[str, str | int]:
    """A question as it was answered — what was asked, the decision, who gave it or why nobody did — as a one-agent
    transcript's notice and a group bubble's tool trail keep it: every view draws the closed card from these."""
    declined = next((why for why in ("expired", "unattended", "stopped") if getattr(given, why)), "")
    return {
        "question": request.id,
        "tool_use_id": request.tool_use_id,
        "tool": request.tool,
        "level": request.level,
        "effect": request.effect,
        "categories": " ".join(request.categories),
        "decision": given.decision,
        "by": given.by,
        "closed": declined,
    }


async def _note(session: Session, kind: str, text: str, detail: dict[str, str | int] | None = None) -> None:
    """An app-only line in the transcript (never sent to a model); a failure to write it is not fatal."""
    try:
        await session.append(Notice(kind=kind, text=text, detail=detail or {}))
    except (OrkasError, OSError):
        log.warning("could not record a %s notice", kind, exc_info=True)


def text_of(message: UserMessage) -> str:
    """What the person typed: the text blocks, exactly (an attached file is a block of its own)."""
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def shown(attachment: Attachment) -> AttachmentShown:
    return AttachmentShown(
        name=attachment.name, size=attachment.size, media_type=attachment.media_type, id=attachment.id
    )


def message_shown(
    message: UserMessage, from_queued: tuple[str, ...] = (), files: Sequence[Attachment] = ()
) -> UserMessageShown:
    """A user message as the views show it: its text and its attachments."""
    ids = {a.path: a.id for a in files}
    attached = tuple(
        AttachmentShown(name=b.name, size=b.size, media_type=b.media_type, id=ids.get(b.path, ""))
        for b in message.content
        if isinstance(b, AttachmentBlock)
    )
    return UserMessageShown(message_id=message.id, text=text_of(message), attachments=attached, from_queued=from_queued)

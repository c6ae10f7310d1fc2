"""Running conversations for the UI: one event stream per conversation, numbered.

`send` starts a run (or, while one is running, queues the message as a steer: it joins the run at the
next safe point, or becomes the next turn). Every event — the engine's and the product's own, typed in
wire.py — gets a sequence number, is kept for catch-up (in memory and in the conversation's
event log on disk, event_log.py) and pushed to subscribers, so a reloaded or reconnected view asks for
"everything after N" and never shows a bubble twice, even across a server restart. `stop` aborts at
once; `answer` resolves a permission question.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from orkas.adapter.conversations.attachments import Attachment, content_for
from orkas.adapter.conversations.event_log import EventLog
from orkas.adapter.conversations.processes import ConversationProcesses
from orkas.adapter.conversations.store import Conversation, ConversationStore
from orkas.adapter.conversations.transcript import LoadReport
from orkas.adapter.learning.run_watch import RunWatch
from orkas.adapter.wire import (
    AttachmentShown,
    GroupStart,
    HistoryChanged,
    Idle,
    MessageNotSent,
    MessageQueued,
    PermissionAnswered,
    ProductEvent,
    QueuedApplied,
    QueuedDropped,
    TitleChanged,
    UnsentDiscarded,
    UserMessageShown,
    run_failed,
    to_wire,
)
from orkas.core.errors import ConfigError, NoProvider, NotFound, OrkasError
from orkas.engine.abort import AbortSignal
from orkas.engine.budget import Budget
from orkas.engine.consent import Decision, Permissions
from orkas.engine.events import Done, Error
from orkas.engine.evolution.signals import RunSignals
from orkas.engine.messages import AttachmentBlock, Message, Notice, TextBlock, ToolResultBlock, UserMessage
from orkas.engine.runner import Agent
from orkas.engine.session import Session
from orkas.engine.steer import SteerQueue

log = logging.getLogger(__name__)
KEEP_EVENTS = 5000  # per conversation, for catch-up; older ones are in the transcript
TITLE_SECONDS = 30.0  # a title call that takes longer is given up (the first words stay)
# What a phone is told about, whichever conversation it has open: an approval waits (or was given), a
# turn finished or failed.
ALERTS = frozenset({"permission_request", "permission_answered", "done", "error", "turn_end"})
Subscription = asyncio.Queue[dict[str, Any]]


@dataclass
class _Active:
    signal: AbortSignal
    steer: SteerQueue
    permissions: Permissions
    budget: Budget | None = None
    task: asyncio.Task[None] | None = None
    start_seq: int = 0  # the last event before this run: a view joining mid-run replays from here
    history_length: int | None = None  # messages in the transcript when the run started (None: not loaded yet)


@dataclass
class _Stream:
    log: EventLog | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    next_seq: int = 1
    subscribers: set[asyncio.Queue[dict[str, Any]]] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a view draws on opening a conversation: the history, and the event to stream after."""

    messages: Sequence[Message]
    after: int
    running: bool
    report: LoadReport | None
    unsent: list[dict[str, Any]] = field(default_factory=list)  # not sent (no provider): resend or discard
    group: list[dict[str, Any]] | None = None  # a group conversation's bus records (then `messages` is empty)


PrepareRun = Callable[[Conversation], tuple[Permissions, Budget | None]]
Publish = Callable[[ProductEvent, str | None], None]


class Groups(Protocol):
    """The group chat, as the runtime sees it (team/conversations.py implements it; the adapter layer
    does not import the team layer)."""

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
    ) -> bool: ...


def _ask_everything(conversation: Conversation) -> tuple[Permissions, Budget | None]:
    return Permissions(workspace=conversation.workspace_path, can_ask=True), None


@dataclass(frozen=True, slots=True)
class Hooks:
    """What else follows a conversation's life (the past-conversations index). Each runs on a worker
    thread — indexing loads models and chunks text — and a failure is logged, never fatal."""

    after_turn: Callable[[Conversation, Sequence[Message]], None] | None = None
    after_delete: Callable[[str], None] | None = None
    after_restore: Callable[[Conversation, Sequence[Message]], None] | None = None
    # Names a new chat from its first message and answer (a short model call); None when it cannot.
    make_title: Callable[[Conversation, str, str], Awaitable[str | None]] | None = None
    after_run: Callable[[RunSignals], None] | None = None  # each actor's run counted (self-evolution)
    advertised: Callable[[str, str], Sequence[str]] | None = None  # (conversation, actor) → skills in its prompt


class ConversationRuntime:
    """`make_agent` builds the agent for a conversation's run (raising `ConfigError` when it cannot);
    `prepare_run` gives that run its permissions (mode, saved rules) and budget; `processes` keeps each
    conversation's background processes across turns."""

    def __init__(
        self,
        store: ConversationStore,
        make_agent: Callable[[Conversation], Agent],
        prepare_run: PrepareRun = _ask_everything,
        hooks: Hooks | None = None,
        processes: ConversationProcesses | None = None,
        groups: Groups | None = None,
    ) -> None:
        self.store = store
        self.groups = groups
        self.make_agent = make_agent
        self.prepare_run = prepare_run
        self.hooks = hooks or Hooks()
        self.processes = processes or ConversationProcesses(store.root.parent / "processes")
        self.active: dict[str, _Active] = {}
        self.streams: dict[str, _Stream] = {}
        self.naming: set[asyncio.Task[None]] = set()  # title calls still going (cancelled at shutdown)
        self.alerts: set[Subscription] = set()  # every conversation's ALERTS, for the phones' notifications
        self.watching: dict[str, RunWatch] = {}  # conversations whose runs are being counted (self-evolution)

    def _stream(self, conversation_id: str) -> _Stream:
        """The conversation's stream, loaded from its event log the first time it is asked for."""
        stream = self.streams.get(conversation_id)
        if stream is None:
            stream = _Stream(log=EventLog(self.store.events_path(conversation_id), KEEP_EVENTS))
            stream.events = stream.log.load() if stream.log else []
            stream.next_seq = stream.events[-1]["seq"] + 1 if stream.events else 1
            self.streams[conversation_id] = stream
            if stream.events and stream.events[-1]["type"] != "idle" and conversation_id not in self.active:
                self.publish(conversation_id, Idle())  # the server stopped mid-run: the replay must end
        return stream

    def _watch(self, conversation_id: str, person: str) -> None:
        """From now on every event this conversation publishes is counted for self-evolution, per actor;
        each run's signals are recorded off the event loop when it ends."""
        if self.hooks.after_run is None:
            return
        listed = self.hooks.advertised
        self.watching[conversation_id] = RunWatch(
            conversation_id,
            person,
            self._recorder(),
            (lambda actor: listed(conversation_id, actor)) if listed is not None else (lambda _actor: ()),
            addressed=re.findall(r"@([a-z0-9][a-z0-9_-]*)", person),
            default=self._bound(conversation_id),
        )

    def _bound(self, conversation_id: str) -> str:
        """Who answers a solo conversation: the named agent it is bound to, else the commander."""
        try:
            return self.store.get(conversation_id).agent or "commander"
        except (NotFound, OSError):
            return "commander"

    def _signal(self, conversation_id: str, *, edits: int = 0, another_answer: int = 0) -> None:
        """Something the person did outside a run (edited their message, asked for another answer)."""
        if self.hooks.after_run is not None:
            signals = RunSignals(agent=self._bound(conversation_id), conversation=conversation_id, outcome="between")
            signals.edits, signals.another_answer = edits, another_answer
            self._recorder()(signals)

    def _recorder(self) -> Callable[[RunSignals], None]:
        assert self.hooks.after_run is not None
        record = self.hooks.after_run
        loop = asyncio.get_running_loop()

        def recorded(signals: RunSignals) -> None:
            task = loop.create_task(_hook(record, signals))
            self.naming.add(
                task
            )  # kept until done; cancelled at shutdown like a title call (a lost signal costs nothing)
            task.add_done_callback(self.naming.discard)

        return recorded

    def publish(self, conversation_id: str, event: ProductEvent, actor: str | None = None) -> dict[str, Any]:
        stream = self._stream(conversation_id)
        if (watch := self.watching.get(conversation_id)) is not None:
            watch.see(event, actor)
        wire = to_wire(conversation_id, stream.next_seq, event, actor)
        stream.next_seq += 1
        stream.events.append(wire)
        if stream.log is not None:
            stream.log.append(wire)
        if conversation_id not in self.active:  # a running turn keeps all its events, for views joining late
            del stream.events[:-KEEP_EVENTS]
            if stream.log is not None:
                stream.log.trim(stream.events)
                stream.log.close()  # reopened by the next event: an idle conversation holds no file
        for queue in stream.subscribers:
            queue.put_nowait(wire)
        if wire["type"] in ALERTS:
            for queue in self.alerts:
                queue.put_nowait(wire)
        return wire

    def waiting_questions(self) -> list[dict[str, Any]]:
        """Permission requests no one has answered yet, in every running conversation (a phone that
        connects is shown them at once)."""
        waiting = []
        for conversation_id in list(self.active):
            events = self._stream(conversation_id).events
            answered = {e["question_id"] for e in events if e["type"] == "permission_answered"}
            waiting += [e for e in events if e["type"] == "permission_request" and e["id"] not in answered]
        return waiting

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

    def _group_snapshot(self, conversation_id: str, active: _Active | None) -> Snapshot:
        assert self.groups is not None
        unsent = self.store.unsent(conversation_id)
        if active is not None:
            records = self.groups.history(conversation_id, active.history_length)
            return Snapshot((), active.start_seq, True, None, unsent, group=records)
        records = self.groups.history(conversation_id)
        return Snapshot((), self._stream(conversation_id).next_seq - 1, False, None, unsent, group=records)

    async def opened(self, conversation_id: str) -> Snapshot:
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
            seq = self._stream(conversation_id).next_seq
            load = functools.partial(self.store.session, conversation_id, write_back=active is None)
            session, report = await asyncio.to_thread(load)
            session.close()
            same_run = self.active.get(conversation_id) is active
            if same_run and (active is not None or self._stream(conversation_id).next_seq == seq):
                return self._snapshot(conversation_id, session.messages(), report, active)
        return self.snapshot(conversation_id)  # runs keep starting and ending: read it on the loop once

    def _snapshot(
        self, conversation_id: str, messages: Sequence[Message], report: LoadReport | None, active: _Active | None
    ) -> Snapshot:
        if active is not None:
            # Until the run has loaded its transcript nothing of it is written: all of it is history.
            shown = messages if active.history_length is None else messages[: active.history_length]
            return Snapshot(shown, active.start_seq, True, report, self.store.unsent(conversation_id))
        after = self._stream(conversation_id).next_seq - 1
        return Snapshot(messages, after, False, report, self.store.unsent(conversation_id))

    def subscribe(
        self, conversation_id: str, after: int = 0
    ) -> tuple[list[dict[str, Any]], asyncio.Queue[dict[str, Any]]]:
        """Events after `after` so far, and a queue of the ones to come. Call `unsubscribe` when done."""
        stream = self._stream(conversation_id)
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        stream.subscribers.add(queue)
        return [e for e in stream.events if e["seq"] > after], queue

    def unsubscribe(self, conversation_id: str, queue: asyncio.Queue[dict[str, Any]]) -> None:
        self.streams.get(conversation_id, _Stream()).subscribers.discard(queue)

    def send(
        self,
        conversation_id: str,
        text: str,
        attachments: list[Attachment] | None = None,
        *,
        message_id: str | None = None,
    ) -> dict[str, Any]:
        conversation = self.store.get(conversation_id)
        files = attachments or []
        content = (TextBlock(text=text), *content_for(files))
        message = UserMessage(content=content) if message_id is None else UserMessage(id=message_id, content=content)
        # The text only at debug level (and redacted there): a normal log says that, not what, someone wrote.
        log.debug("conversation %s: message %s, %d files: %s", conversation_id, message.id, len(files), text[:500])
        log.info("conversation %s: message %s (%d chars, %d files)", conversation_id, message.id, len(text), len(files))
        self.store.touch(conversation, text)  # newest in the list, and titled by its first words at once
        active = self.active.get(conversation_id)
        if active is not None:
            active.steer.put(message)
            shown = tuple(_shown(a) for a in files)
            self.publish(conversation_id, MessageQueued(message_id=message.id, text=text, attachments=shown))
            return {"queued": True, "message_id": message.id}
        return self._start(conversation, message, files)

    def _start(self, conversation: Conversation, message: UserMessage, files: list[Attachment]) -> dict[str, Any]:
        permissions, budget = self.prepare_run(conversation)

        def expired(question_id: str) -> None:
            self.publish(conversation.id, PermissionAnswered(question_id=question_id, decision="deny", expired=True))

        permissions.on_expired = expired
        stream = self._stream(conversation.id)
        active = _Active(AbortSignal(), SteerQueue(), permissions, budget=budget, start_seq=stream.next_seq - 1)
        self.active[conversation.id] = active
        active.task = asyncio.create_task(self._run(conversation, message, active, files))
        return {"queued": False, "message_id": message.id}

    # ---- versions: edit and resend, another answer, retry, continue (one-agent conversations) ----
    async def edit(self, conversation_id: str, message_id: str, text: str) -> dict[str, Any]:
        """Send `text` in place of message `message_id` (its files kept): the conversation continues from
        the edit, and what followed the old message stays reachable as another version."""
        original = await self._fork(conversation_id, message_id)
        self._signal(conversation_id, edits=1)
        kept = tuple(b for b in original.content if not isinstance(b, TextBlock))
        return self._restart(conversation_id, UserMessage(content=(TextBlock(text=text), *kept)))

    async def regenerate(self, conversation_id: str, message_id: str) -> dict[str, Any]:
        """Answer message `message_id` again (another answer, or a retry after an error); the previous
        answer stays reachable as another version."""
        original = await self._fork(conversation_id, message_id)
        self._signal(conversation_id, another_answer=1)
        return self._restart(conversation_id, UserMessage(content=original.content))

    async def switch_version(self, conversation_id: str, after: str, index: int) -> None:
        self._idle_single(conversation_id)
        session, _ = await asyncio.to_thread(self.store.session, conversation_id)
        try:
            messages = self.store.branches(conversation_id).switch(session.messages(), after, index)
            await session.rewrite(messages)
        finally:
            session.close()
        self.publish(conversation_id, HistoryChanged())

    def versions(self, conversation_id: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
        return [asdict(v) for v in self.store.branches(conversation_id).shown(messages)]

    async def _fork(self, conversation_id: str, message_id: str) -> UserMessage:
        self._idle_single(conversation_id)
        session, _ = await asyncio.to_thread(self.store.session, conversation_id)
        try:
            messages = session.messages()
            at = next((i for i, m in enumerate(messages) if m.id == message_id), None)
            original = messages[at] if at is not None else None
            if not isinstance(original, UserMessage) or not _typed(original):
                raise NotFound("that message is not in this conversation (an older part may have been summarized)")
            assert at is not None
            await session.rewrite(self.store.branches(conversation_id).fork(messages, at))
        finally:
            session.close()
        self.publish(conversation_id, HistoryChanged())
        return original

    def _idle_single(self, conversation_id: str) -> None:
        self.store.get(conversation_id)  # NotFound first
        if conversation_id in self.active:
            raise ConfigError("a reply is still being written: wait for it or stop it first")
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

    def resend(self, conversation_id: str, message_id: str) -> dict[str, Any]:
        """Send a message kept as not sent, under the same id (its bubble becomes the sent one)."""
        record = self.store.take_unsent(conversation_id, message_id)
        files = [Attachment(**a) for a in record.get("attachments", [])]
        return self.send(conversation_id, record["text"], files, message_id=message_id)

    def discard(self, conversation_id: str, message_id: str) -> None:
        self.store.take_unsent(conversation_id, message_id)
        self.publish(conversation_id, UnsentDiscarded(message_id=message_id))

    def stop(self, conversation_id: str) -> bool:
        active = self.active.get(conversation_id)
        if active is None:
            return False
        active.signal.abort("stopped by the user")
        active.permissions.deny_all()
        return True

    def answer(self, conversation_id: str, question_id: str, decision: Decision, *, by: str = "") -> bool:
        """The first answer wins (the desktop's or a phone's); a later one finds no open question."""
        active = self.active.get(conversation_id)
        if active is None or not active.permissions.answer(question_id, decision):
            return False
        self.publish(conversation_id, PermissionAnswered(question_id=question_id, decision=decision, by=by))
        return True

    def finished_turns(self, conversation_id: str) -> int:
        """How many turns have ended in this conversation's kept events (the phone's unread count)."""
        return sum(1 for e in self._stream(conversation_id).events if e["type"] in ("done", "turn_end"))

    async def delete(self, conversation_id: str) -> None:
        """To the recycle bin: the run stopped, its processes stopped, and no longer searchable."""
        self.store.get(conversation_id)  # NotFound before anything stops
        active = self.active.get(conversation_id)
        if active is not None and self.stop(conversation_id) and active.task is not None:
            await asyncio.wait({active.task}, timeout=5)
        await self.processes.forget(conversation_id)
        self.store.delete(conversation_id)
        stream = self.streams.pop(conversation_id, None)
        if stream is not None and stream.log is not None:
            stream.log.close()
        if self.hooks.after_delete is not None:
            await _hook(self.hooks.after_delete, conversation_id)

    async def restore(self, conversation_id: str) -> Conversation:
        """Back from the recycle bin, searchable again."""
        conversation = self.store.restore(conversation_id)
        if self.hooks.after_restore is not None:
            session, _ = self.store.session(conversation_id)
            session.close()
            await _hook(self.hooks.after_restore, conversation, session.messages())
        return conversation

    async def _run(
        self, conversation: Conversation, message: UserMessage, active: _Active, files: list[Attachment]
    ) -> None:
        if self.groups is not None and await asyncio.to_thread(self.groups.is_group, conversation.id):
            await self._run_group(self.groups, conversation, message, active, files)
            return
        # Off the event loop: loading a long transcript, and building the agent (the first one opens the
        # knowledge base and its model), must not stall the other conversations' streams.
        session, _ = await asyncio.to_thread(self.store.session, conversation.id)  # loaded once per run, here
        active.history_length = len(session.messages())
        first_prompt, first_answer = _text(message), None  # a new chat's first exchange: its title's source
        try:
            agent = await asyncio.to_thread(self.make_agent, conversation)
        except ConfigError as e:  # no provider, bad model: nothing was sent; keep it for a resend
            session.close()
            self._not_sent(conversation, message, files, e)
            return
        try:
            self.publish(conversation.id, _message_shown(message, files=files))
            while True:
                self._watch(conversation.id, _text(message))
                async for event in agent.run(
                    message,
                    session=session,
                    signal=active.signal,
                    steer=active.steer,
                    permissions=active.permissions,
                    budget=active.budget,
                ):
                    self.publish(conversation.id, event)
                    if isinstance(event, Done) and active.history_length == 0 and first_answer is None:
                        first_answer = event.text
                    if isinstance(event, Done | Error):
                        self.store.touch(conversation, _text(message))
                    if isinstance(event, Error):  # a reloaded view shows the same marker
                        facts: dict[str, str | int] = {
                            "error": event.kind,
                            "cause": event.cause,
                            "attempts": event.attempts,
                        }
                        await _note(session, "stopped" if event.aborted else "error", event.message, facts)
                if self.hooks.after_turn is not None:  # off the loop: other streams go on meanwhile
                    await _hook(self.hooks.after_turn, conversation, list(session.messages()))
                left = active.steer.drain()
                if left and active.signal.aborted:  # stopped: say so, so the UI gives the words back
                    self.publish(conversation.id, QueuedDropped(message_ids=tuple(m.id for m in left)))
                if not left or active.signal.aborted:
                    return
                # Sent while the run was finishing: the next turn, never lost (and shown once: the
                # queued bubbles become this message).
                message = left[0] if len(left) == 1 else UserMessage(content=tuple(b for m in left for b in m.content))
                queued_ids = tuple(m.id for m in left)
                self.publish(conversation.id, QueuedApplied(message_ids=queued_ids, message_id=message.id))
                self.publish(conversation.id, _message_shown(message, from_queued=queued_ids))
        except Exception:  # a bug must still end the run visibly
            log.exception("conversation %s: run failed", conversation.id)
            self.publish(conversation.id, run_failed("internal", "the run failed unexpectedly"))
        finally:
            session.close()
            await agent.providers.aclose()
            self.active.pop(conversation.id, None)
            self.watching.pop(conversation.id, None)
            self.publish(conversation.id, Idle())
            if first_answer is not None and conversation.title_source == "first_words":
                task = asyncio.create_task(self._name(conversation.id, first_prompt, first_answer))
                self.naming.add(task)
                task.add_done_callback(self.naming.discard)

    async def _name(self, conversation_id: str, prompt: str, answer: str) -> None:
        """After the first answer, the chat's title from a short model call (the first words until then).
        A failure, or a title the person typed meanwhile, leaves the title as it is."""
        if self.hooks.make_title is None:
            return
        try:
            conversation = self.store.get(conversation_id)
            title = await asyncio.wait_for(self.hooks.make_title(conversation, prompt, answer), TITLE_SECONDS)
            named = self.store.retitle(conversation_id, title) if title else None
        except (OrkasError, OSError, TimeoutError) as e:
            log.info("conversation %s: no title from the model (%s)", conversation_id, type(e).__name__)
            return
        if named is not None:
            self.publish(conversation_id, TitleChanged(title=named.title))

    def _not_sent(
        self, conversation: Conversation, message: UserMessage, files: list[Attachment], e: ConfigError
    ) -> None:
        text = _text(message)
        self.store.keep_unsent(
            conversation.id, {"message_id": message.id, "text": text, "attachments": [asdict(a) for a in files]}
        )
        self.publish(
            conversation.id,
            MessageNotSent(
                message_id=message.id,
                text=text,
                attachments=tuple(_shown(a) for a in files),
                kind="no_provider" if isinstance(e, NoProvider) else "config",
                reason=str(e),
            ),
        )
        self.active.pop(conversation.id, None)
        self.publish(conversation.id, Idle())

    async def _run_group(
        self, groups: Groups, conversation: Conversation, message: UserMessage, active: _Active, files: list[Attachment]
    ) -> None:
        """A group conversation's turn: the team runs it and publishes each actor's events."""
        active.history_length = await asyncio.to_thread(groups.size, conversation.id)
        try:
            await asyncio.to_thread(groups.check, conversation)
        except ConfigError as e:
            self._not_sent(conversation, message, files, e)
            return

        def publish(event: ProductEvent, actor: str | None) -> None:
            self.publish(conversation.id, event, actor)

        try:
            self.publish(conversation.id, _message_shown(message, files=files))
            while True:
                group = await asyncio.to_thread(groups.members, conversation.id)
                start = GroupStart(members=tuple(group["members"]), floor=group["floor"])
                self.publish(conversation.id, start, "group")
                self._watch(conversation.id, _text(message))
                await groups.run(
                    conversation,
                    _text(message),
                    attachments=[asdict(_shown(a)) for a in files],
                    signal=active.signal,
                    steer=active.steer,
                    permissions=active.permissions,
                    budget=active.budget,
                    publish=publish,
                )
                self.store.touch(conversation, _text(message))
                if self.hooks.after_turn is not None:
                    messages = await asyncio.to_thread(groups.as_messages, conversation.id)
                    await _hook(self.hooks.after_turn, conversation, messages)
                left = active.steer.drain()
                if left and active.signal.aborted:
                    self.publish(conversation.id, QueuedDropped(message_ids=tuple(m.id for m in left)))
                if not left or active.signal.aborted:
                    return
                message = left[0] if len(left) == 1 else UserMessage(content=tuple(b for m in left for b in m.content))
                queued_ids = tuple(m.id for m in left)
                self.publish(conversation.id, QueuedApplied(message_ids=queued_ids, message_id=message.id))
                self.publish(conversation.id, _message_shown(message, from_queued=queued_ids))
                active.history_length = await asyncio.to_thread(groups.size, conversation.id)
                active.start_seq = self._stream(conversation.id).next_seq - 1
        except Exception:  # a bug must still end the run visibly
            log.exception("conversation %s: group run failed", conversation.id)
            self.publish(conversation.id, run_failed("internal", "the run failed unexpectedly"))
        finally:
            self.active.pop(conversation.id, None)
            self.watching.pop(conversation.id, None)
            self.publish(conversation.id, Idle())

    async def settle(self) -> None:
        """Wait for what follows the runs (titles, learning signals) to be written: a command about to exit
        keeps them."""
        if self.naming:
            await asyncio.wait(set(self.naming), timeout=30)

    async def shutdown(self) -> None:
        """The app is exiting: stop every run and every background process."""
        for conversation_id in list(self.active):
            self.stop(conversation_id)
        tasks = [a.task for a in self.active.values() if a.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        for naming in list(self.naming):
            naming.cancel()
        await self.processes.stop_all()
        for stream in self.streams.values():
            if stream.log is not None:
                stream.log.close()


async def _hook(hook: Callable[..., None], *args: Any) -> None:
    try:
        await asyncio.to_thread(hook, *args)
    except Exception:  # indexing is a convenience: it never breaks a conversation
        log.exception("a conversation hook failed (%s)", getattr(hook, "__name__", hook))


async def _note(session: Session, kind: str, text: str, detail: dict[str, str | int] | None = None) -> None:
    """An app-only line in the transcript (never sent to a model); a failure to write it is not fatal."""
    try:
        await session.append(Notice(kind=kind, text=text, detail=detail or {}))
    except (OrkasError, OSError):
        log.warning("could not record a %s notice", kind, exc_info=True)


def _typed(message: UserMessage) -> bool:
    """A message the person wrote (not the tool results the transcript also keeps as user messages)."""
    return any(isinstance(b, TextBlock | AttachmentBlock) for b in message.content) and not any(
        isinstance(b, ToolResultBlock) for b in message.content
    )


def _text(message: UserMessage) -> str:
    """What the person typed: the text blocks, exactly (an attached file is a block of its own)."""
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def _shown(attachment: Attachment) -> AttachmentShown:
    return AttachmentShown(
        name=attachment.name, size=attachment.size, media_type=attachment.media_type, id=attachment.id
    )


def _message_shown(
    message: UserMessage, from_queued: tuple[str, ...] = (), files: Sequence[Attachment] = ()
) -> UserMessageShown:
    """A user message as the UI shows it: its text and its attachments."""
    ids = {a.path: a.id for a in files}
    shown = tuple(
        AttachmentShown(name=b.name, size=b.size, media_type=b.media_type, id=ids.get(b.path, ""))
        for b in message.content
        if isinstance(b, AttachmentBlock)
    )
    return UserMessageShown(message_id=message.id, text=_text(message), attachments=shown, from_queued=from_queued)

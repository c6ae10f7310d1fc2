"""Running conversations for every view — the window, the phone and `orkas run` drive this one runtime.

`send` starts a run (or, while one is running, queues the message as a steer: it joins the run at the next safe
point, or becomes the next turn: turns.py). Every event — the engine's and the product's own, typed in wire.py —
is numbered and kept for catch-up (streams.py), so a reloaded or reconnected view asks for "everything after N"
and never shows a bubble twice, even across a server restart. `stop` aborts at once; `answer` resolves a
permission question; versions (edit, another answer, switch) are versions.py's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from orkas.adapter.conversations.attachments import Attachment, content_for
from orkas.adapter.conversations.checkpoints import Checkpoints
from orkas.adapter.conversations.counting import Counting
from orkas.adapter.conversations.processes import ConversationProcesses
from orkas.adapter.conversations.rewinds import Rewinds
from orkas.adapter.conversations.snapshots import Snapshots
from orkas.adapter.conversations.store import Conversation, ConversationStore
from orkas.adapter.conversations.streams import Published, Streams, Subscription
from orkas.adapter.conversations.turns import Active, Groups, GroupTurn, Loop, Runner, Solo, run, shown, text_of
from orkas.adapter.conversations.versions import Versions
from orkas.adapter.wire import (
    Idle,
    MessageNotSent,
    MessageQueued,
    PermissionAnswered,
    ProductEvent,
    TitleChanged,
    UnsentDiscarded,
)
from orkas.core.errors import ConfigError, NoProvider, OrkasError
from orkas.core.fsutil import HeldLock
from orkas.engine.abort import AbortSignal
from orkas.engine.budget import Budget
from orkas.engine.consent import Decision, Permissions
from orkas.engine.messages import Message, TextBlock, UserMessage
from orkas.engine.runner import Agent
from orkas.engine.steer import SteerQueue
from orkas.engine.tool_runner import CLOSED

if TYPE_CHECKING:  # learning's types: its modules load only when a run is counted
    from orkas.engine.evolution.signals import RunSignals

log = logging.getLogger(__name__)
TITLE_SECONDS = 30.0  # a title call that takes longer is given up (the first words stay)


PrepareRun = Callable[[Conversation], tuple[Permissions, Budget | None]]


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
    learning: Callable[[], bool] = lambda: True  # whether runs are counted now (learning is off until turned on)
    advertised: Callable[[str, str], Sequence[str]] | None = None  # (conversation, actor) → skills in its prompt
    instructions: Callable[[Conversation], ProductEvent | None] | None = None  # said as each run starts


class ConversationRuntime(Versions, Snapshots, Rewinds):
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
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self.store = store
        self.groups = groups
        self.checkpoints = checkpoints  # the workspace before each turn that may change it (rewind)
        self.make_agent = make_agent
        self.prepare_run = prepare_run
        self.hooks = hooks or Hooks()
        self.processes = processes or ConversationProcesses(store.root.parent / "processes")
        self.active: dict[str, Active] = {}
        self.streams = Streams(
            store.events_path, lambda conversation_id: conversation_id in self.active, store.running_elsewhere
        )
        self.alerts = self.streams.alerts  # every conversation's alerts, for the phones' notifications
        self.naming: set[asyncio.Task[None]] = set()  # title calls and signals still going (cancelled at shutdown)
        hooks = self.hooks
        self.counting = Counting(store, hooks.after_run, hooks.advertised, self.naming, hooks.learning)  # for learning
        self.streams.observers.append(self.counting.observe)

    def _signal(self, conversation_id: str, *, edits: int = 0, another_answer: int = 0) -> None:
        self.counting.between(conversation_id, edits=edits, another_answer=another_answer)

    def publish(self, conversation_id: str, event: ProductEvent, actor: str | None = None) -> Published:
        return self.streams.publish(conversation_id, event, actor)

    def waiting_questions(self, elsewhere: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Permission requests no one has answered yet, in every running conversation (a phone that
        connects is shown them at once), and in those of `elsewhere` another process runs."""
        for conversation_id in elsewhere:
            self.streams.catch_up(conversation_id)
        return self.streams.waiting_questions([*self.active, *elsewhere])

    def waiting(self, conversation_id: str) -> bool:
        """Its run here waits for the person's answer to a question (an approval card is open)."""
        active = self.active.get(conversation_id)
        return active is not None and bool(active.permissions.open_questions)

    def running(self, conversation_id: str) -> bool:
        """A run goes in the conversation, here or in another process (a terminal's `orkas run`)."""
        return conversation_id in self.active or self.store.running_elsewhere(conversation_id)

    def subscribe(self, conversation_id: str, after: int = 0) -> tuple[list[dict[str, Any]], Subscription]:
        """Events after `after` so far, and a queue of the ones to come, in their wire form (where they leave the
        process). Call `unsubscribe` when done."""
        return self.streams.subscribe(conversation_id, after)

    def unsubscribe(self, conversation_id: str, queue: Subscription) -> None:
        self.streams.unsubscribe(conversation_id, queue)

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
        active = self.active.get(conversation_id)
        if active is not None:
            self.store.touch(conversation, text)  # newest in the list, and titled by its first words at once
            active.steer.put(message)
            attached = tuple(shown(a) for a in files)
            self.publish(conversation_id, MessageQueued(message_id=message.id, text=text, attachments=attached))
            return {"queued": True, "message_id": message.id}
        held = self.store.hold_run(conversation_id)  # ConversationBusy before anything is written
        self.store.touch(conversation, text)
        return self._start(conversation, message, files, held)

    def _start(
        self, conversation: Conversation, message: UserMessage, files: list[Attachment], held: HeldLock | None = None
    ) -> dict[str, Any]:
        """`held`: the conversation's run lock, already taken (else taken here; released when the run is idle)."""
        held = held or self.store.hold_run(conversation.id)
        try:
            permissions, budget = self.prepare_run(conversation)
        except BaseException:
            held.release()
            raise

        def expired(question_id: str) -> None:
            self.publish(conversation.id, PermissionAnswered(question_id=question_id, decision="deny", expired=True))

        permissions.on_expired = expired
        start = self.streams.last_seq(conversation.id)
        active = Active(AbortSignal(), SteerQueue(), permissions, budget=budget, start_seq=start, held=held)
        self.active[conversation.id] = active
        active.task = asyncio.create_task(self._run(conversation, message, active, files))
        return {"queued": False, "message_id": message.id}

    def resend(self, conversation_id: str, message_id: str) -> dict[str, Any]:
        """Send a message kept as not sent, under the same id (its bubble becomes the sent one)."""
        record = self.store.take_unsent(conversation_id, message_id)
        files = [Attachment(**a) for a in record.get("attachments", [])]
        return self.send(conversation_id, record["text"], files, message_id=message_id)

    def discard(self, conversation_id: str, message_id: str) -> None:
        self.store.take_unsent(conversation_id, message_id)
        self.publish(conversation_id, UnsentDiscarded(message_id=message_id))

    def _not_elsewhere(self, conversation_id: str, what: str) -> None:
        """A run another process holds (a terminal's `orkas run`) is answered and stopped there: say so, rather
        than a "no such question" or a Stop that silently does nothing."""
        if conversation_id not in self.active and self.store.running_elsewhere(conversation_id):
            raise self.store.busy(conversation_id, what)

    def stop(self, conversation_id: str, reason: str = "stopped by the user") -> bool:
        """Raises ConversationBusy for a run another process holds. `reason`: the person's Stop, or Orkas quitting."""
        active = self.active.get(conversation_id)
        if active is None:
            self._not_elsewhere(conversation_id, "stop it")
            return False
        for question_id in active.permissions.open_questions:  # each view closes the card, saying why
            self.publish(conversation_id, PermissionAnswered(question_id=question_id, decision="deny", stopped=True))
        active.signal.abort(reason)
        active.permissions.deny_all()
        return True

    def is_open(self, conversation_id: str, question_id: str) -> bool:
        """The question still waits for an answer (a stop, an expiry or another answer closes it)."""
        active = self.active.get(conversation_id)
        return active is not None and question_id in active.permissions.open_questions

    def answer(
        self, conversation_id: str, question_id: str, decision: Decision, *, by: str = "", unattended: bool = False
    ) -> bool:
        """The first answer wins (the desktop's, a phone's or the terminal's); a later one finds no open question.
        `unattended`: nobody was there to ask, and the no is said as such."""
        active = self.active.get(conversation_id)
        if active is None:
            self._not_elsewhere(conversation_id, "answer it")
        why = f"{by} had no terminal or window to ask in" if unattended else ""
        if active is None or not active.permissions.answer(question_id, decision, why=why):
            return False
        answered = PermissionAnswered(question_id=question_id, decision=decision, by=by, unattended=unattended)
        self.publish(conversation_id, answered)
        return True

    def answer_given(self, conversation_id: str, question_id: str) -> PermissionAnswered | None:
        """What closed a question `answer` found closed (another view's answer, an expiry, a Stop): a view answering
        late is told what was decided and by whom, rather than "no such question"."""
        return self.streams.answer_given(conversation_id, question_id)

    async def delete(self, conversation_id: str) -> None:
        """To the recycle bin: the run stopped, its processes stopped, and no longer searchable."""
        self.store.get(conversation_id)  # NotFound before anything stops
        self._not_elsewhere(conversation_id, "stop it, then delete it")  # its run would fail writing into the bin
        active = self.active.get(conversation_id)
        if active is not None and self.stop(conversation_id) and active.task is not None:
            await asyncio.wait({active.task}, timeout=5)
        await self.processes.forget(conversation_id)
        self.store.delete(conversation_id)
        self.streams.forget(conversation_id)
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
        self, conversation: Conversation, message: UserMessage, active: Active, files: list[Attachment]
    ) -> None:
        """One run through turns.py's loop, with the runner the conversation needs: one agent, or its group."""
        cid = conversation.id

        def publish(event: ProductEvent, actor: str | None = None) -> None:
            self.publish(cid, event, actor)

        def answered(question_id: str) -> PermissionAnswered | None:
            return self.streams.answer_given(cid, question_id)

        runner: Runner
        if self.groups is not None and await asyncio.to_thread(self.groups.is_group, cid):
            runner = GroupTurn(self.groups, self.store, conversation, publish, answered)
        else:
            runner = Solo(self.store, conversation, self.make_agent, publish, answered)

        async def after_turn(messages: Sequence[Message]) -> None:
            if self.hooks.after_turn is not None:  # off the loop: other streams go on meanwhile
                await _hook(self.hooks.after_turn, conversation, messages)

        loop = Loop(
            publish=lambda event: publish(event, runner.actor),
            watch=lambda person: self.counting.watch(cid, person),
            after_turn=after_turn,
            not_sent=lambda message, files, e: self._not_sent(conversation, message, files, e),
            last_seq=lambda: self.streams.last_seq(cid),
            said_first=lambda: self.hooks.instructions(conversation) if self.hooks.instructions else None,
            before_turn=lambda message: self._checkpoint(conversation, message, active),
        )
        try:
            await run(runner, loop, message, files, active)
        finally:
            self.active.pop(cid, None)
            self.counting.done(cid)
            self.publish(cid, Idle(), runner.actor)
            if active.held is not None:
                active.held.release()  # after the run's last event: another process may number on from it
            if runner.first_answer is not None and conversation.title_source == "first_words":
                task = asyncio.create_task(self._name(cid, text_of(message), runner.first_answer))
                self.naming.add(task)
                task.add_done_callback(self.naming.discard)

    async def _checkpoint(self, conversation: Conversation, message: UserMessage, active: Active) -> None:
        """The workspace as it is before a turn that may change it (any mode but plan), kept under the person's
        message so a rewind from it can undo what the turn's tools and commands did. A failure is logged: the turn
        still runs (its rewind then says there is no checkpoint)."""
        if self.checkpoints is None or active.permissions.mode == "plan":
            return
        try:
            kept = await asyncio.to_thread(
                self.checkpoints.before_turn, conversation.id, conversation.workspace_path, message.id
            )
        except OSError as e:
            log.warning("conversation %s: no checkpoint before this turn (%s)", conversation.id, type(e).__name__)
            return
        log.info(
            "conversation %s: checkpoint %s, %d files, %d new bytes in %.0f ms",
            conversation.id,
            kept.checkpoint,
            kept.files,
            kept.new_bytes,
            kept.seconds * 1000,
        )

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
        self, conversation: Conversation, message: UserMessage, files: Sequence[Attachment], e: ConfigError
    ) -> None:
        text = text_of(message)
        self.store.keep_unsent(
            conversation.id, {"message_id": message.id, "text": text, "attachments": [asdict(a) for a in files]}
        )
        self.publish(
            conversation.id,
            MessageNotSent(
                message_id=message.id,
                text=text,
                attachments=tuple(shown(a) for a in files),
                kind="no_provider" if isinstance(e, NoProvider) else "config",
                reason=str(e),
            ),
        )

    async def settle(self) -> None:
        """Wait for what follows the runs (titles, learning signals) to be written: a command about to exit
        keeps them."""
        if self.naming:
            await asyncio.wait(set(self.naming), timeout=30)

    async def shutdown(self) -> None:
        """The app is exiting: stop every run and every background process."""
        for conversation_id in list(self.active):
            self.stop(conversation_id, CLOSED)
        tasks = [a.task for a in self.active.values() if a.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        for naming in list(self.naming):
            naming.cancel()
        await self.processes.stop_all()
        self.streams.close()


async def _hook(hook: Callable[..., None], *args: Any) -> None:
    try:
        await asyncio.to_thread(hook, *args)
    except Exception:  # indexing is a convenience: it never breaks a conversation
        log.exception("a conversation hook failed (%s)", getattr(hook, "__name__", hook))

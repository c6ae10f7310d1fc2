"""Running conversations for the UI: one event stream per conversation, numbered.

`send` starts a run (or, while one is running, queues the message as a steer: it joins the run at the
next safe point, or becomes the next turn). Every engine event is turned once into a product event
with a sequence number, kept for catch-up and pushed to subscribers, so a reloaded or reconnected view
asks for "everything after N" and never shows a bubble twice. `stop` aborts at once; `answer` resolves
a permission question.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from orkas.adapter.conversations import Conversation, ConversationStore
from orkas.core.errors import ConfigError
from orkas.engine.abort import AbortSignal
from orkas.engine.consent import Decision, Permissions
from orkas.engine.events import Done, Error, event_dict
from orkas.engine.messages import UserMessage, user_text
from orkas.engine.runner import Agent
from orkas.engine.steer import SteerQueue

log = logging.getLogger(__name__)
KEEP_EVENTS = 5000  # per conversation, for catch-up; older ones are in the transcript
Subscription = asyncio.Queue[dict[str, Any]]


@dataclass
class _Active:
    signal: AbortSignal
    steer: SteerQueue
    permissions: Permissions
    task: asyncio.Task[None] | None = None


@dataclass
class _Stream:
    events: list[dict[str, Any]] = field(default_factory=list)
    next_seq: int = 1
    subscribers: set[asyncio.Queue[dict[str, Any]]] = field(default_factory=set)


class ConversationRuntime:
    def __init__(self, store: ConversationStore, make_agent: Callable[[Conversation], Agent]) -> None:
        self.store = store
        self.make_agent = make_agent
        self.active: dict[str, _Active] = {}
        self.streams: dict[str, _Stream] = {}

    def publish(self, conversation_id: str, data: dict[str, Any]) -> dict[str, Any]:
        stream = self.streams.setdefault(conversation_id, _Stream())
        event = {"seq": stream.next_seq, "conversation": conversation_id, **data}
        stream.next_seq += 1
        stream.events.append(event)
        del stream.events[:-KEEP_EVENTS]
        for queue in stream.subscribers:
            queue.put_nowait(event)
        return event

    def subscribe(
        self, conversation_id: str, after: int = 0
    ) -> tuple[list[dict[str, Any]], asyncio.Queue[dict[str, Any]]]:
        """Events after `after` so far, and a queue of the ones to come. Call `unsubscribe` when done."""
        stream = self.streams.setdefault(conversation_id, _Stream())
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        stream.subscribers.add(queue)
        return [e for e in stream.events if e["seq"] > after], queue

    def unsubscribe(self, conversation_id: str, queue: asyncio.Queue[dict[str, Any]]) -> None:
        self.streams.get(conversation_id, _Stream()).subscribers.discard(queue)

    def send(self, conversation_id: str, text: str) -> dict[str, Any]:
        conversation = self.store.get(conversation_id)
        message = user_text(text)
        active = self.active.get(conversation_id)
        if active is not None:
            active.steer.put(message)
            self.publish(conversation_id, {"type": "message_queued", "message_id": message.id, "text": text})
            return {"queued": True, "message_id": message.id}
        active = _Active(AbortSignal(), SteerQueue(), Permissions(workspace=conversation.workspace_path, can_ask=True))
        self.active[conversation_id] = active
        active.task = asyncio.create_task(self._run(conversation, message, active))
        return {"queued": False, "message_id": message.id}

    def stop(self, conversation_id: str) -> bool:
        active = self.active.get(conversation_id)
        if active is None:
            return False
        active.signal.abort("stopped by the user")
        active.permissions.deny_all()
        return True

    def answer(self, conversation_id: str, question_id: str, decision: Decision) -> bool:
        active = self.active.get(conversation_id)
        return active is not None and active.permissions.answer(question_id, decision)

    async def _run(self, conversation: Conversation, message: UserMessage, active: _Active) -> None:
        session, _ = self.store.session(conversation.id)
        try:
            agent = self.make_agent(conversation)
        except ConfigError as e:  # no provider, bad model: keep the message, say why nothing answered
            await session.append(message)
            self.publish(conversation.id, {"type": "user_message", "message_id": message.id, "text": _text(message)})
            self.publish(conversation.id, {"type": "error", "kind": "provider", "message": str(e)})
            self.active.pop(conversation.id, None)
            self.publish(conversation.id, {"type": "idle"})
            session.close()
            return
        try:
            while True:
                self.publish(
                    conversation.id, {"type": "user_message", "message_id": message.id, "text": _text(message)}
                )
                async for event in agent.run(
                    message, session=session, signal=active.signal, steer=active.steer, permissions=active.permissions
                ):
                    self.publish(conversation.id, event_dict(event))
                    if isinstance(event, Done | Error):
                        self.store.touch(conversation, _text(message))
                left = active.steer.drain()
                if not left or active.signal.aborted:
                    return
                # Sent while the run was finishing: the next turn, never lost.
                message = UserMessage(content=tuple(b for m in left for b in m.content))
        except Exception:  # a bug must still end the run visibly
            log.exception("conversation %s: run failed", conversation.id)
            self.publish(
                conversation.id, {"type": "error", "kind": "internal", "message": "the run failed unexpectedly"}
            )
        finally:
            session.close()
            self.active.pop(conversation.id, None)
            self.publish(conversation.id, {"type": "idle"})

    async def shutdown(self) -> None:
        for conversation_id in list(self.active):
            self.stop(conversation_id)
        tasks = [a.task for a in self.active.values() if a.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=5)


def _text(message: UserMessage) -> str:
    return "".join(getattr(b, "text", "") for b in message.content)

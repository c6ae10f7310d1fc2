"""One running turn: model rounds, tool rounds, and every way a turn can end.

Each round: compact if the context is filling up → ask the model → if it called tools, run them
(loop guard, parallel read-only batches) and commit their results together with any steering
message the person sent meanwhile → ask again. A final answer cut off by the output limit gets one
continuation; a final answer with a steering message waiting starts a new turn in the same run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Literal

from orkas.engine.abort import AbortSignal
from orkas.engine.budget import Budget
from orkas.engine.catalog import Price
from orkas.engine.compaction import Compactor
from orkas.engine.context import ContextMeter
from orkas.engine.events import Compaction, Done, Error, Event, RunWarning, SteerApplied, Timings, UsageUpdate
from orkas.engine.hooks import MAX_CONTINUES, Hooks, fire_on_turn
from orkas.engine.hooks import Outcome as HookOutcome
from orkas.engine.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    StopReason,
    TextBlock,
    Usage,
    UserMessage,
)
from orkas.engine.model_call import AttemptSpent, CallFailed, CallSucceeded, ModelCall, Outcome
from orkas.engine.session import Session
from orkas.engine.steer import SteerQueue
from orkas.engine.tool_runner import ToolRunner, not_run_results

log = logging.getLogger(__name__)

LIMIT_TEXT = "not run: the tool-round limit was reached"
# What the model reads when a Stop hook keeps it going (the hook's reason follows).
KEEP_GOING = "A Stop hook asks you not to stop yet: "
CONTINUE_NOTE = (
    "[Orkas] Your reply was cut off by the output limit. Continue exactly where it stopped, without repeating anything."
)


def limit_note(limit: int) -> str:
    return (
        f"[Orkas] This run reached its limit of {limit} tool rounds, so the last tool calls were not "
        "run. Do not call tools now: tell the user what was done, what remains, and how to continue."
    )


class Stop(Exception):
    """Ends the turn with `event` (a failure already turned into the run's final event)."""

    def __init__(self, event: Error) -> None:
        self.event = event


@dataclass(slots=True, kw_only=True)
class Turn:
    max_tool_loops: int
    session: Session
    signal: AbortSignal
    steer: SteerQueue
    call: ModelCall
    tools: ToolRunner
    compactor: Compactor
    fixed_tokens: int
    task: str
    total: Usage = field(default_factory=Usage)
    loops: int = 0
    limit_reached: bool = False
    continued: bool = False
    answer_so_far: str = ""
    started: float = field(default_factory=time.perf_counter)
    meter: ContextMeter = field(default_factory=ContextMeter)
    price: Price | None = None
    budget: Budget | None = None
    cost: float | None = 0.0
    so_far: bool = False  # a call was counted only as far as the provider had counted (`UsageUpdate.partial`)
    hooks: Hooks | None = None
    kept_going: int = 0  # times a Stop hook kept this run going

    async def rounds(self) -> AsyncGenerator[Event, None]:
        overflow_retried = False
        while True:
            async for event in self._compact(force=False):
                yield event
            if self.budget is not None and (reason := self.budget.blocked()) is not None:
                which = self.budget.limit_reached() or ""  # the view says which limit, in the person's words
                raise Stop(self._error(Error(kind="budget", message=reason, cause=which)))
            outcome: Outcome | None = None
            async with aclosing(self.call.stream(tool_choice="none" if self.limit_reached else "auto")) as events:
                async for item in events:
                    if isinstance(item, CallSucceeded | CallFailed):
                        outcome = item
                    elif isinstance(item, AttemptSpent):  # paid for, then tried again
                        self.total = self.total + item.usage
                        yield self._count(item.usage, self.call.provider.name, self.call.model, partial=True)
                    else:
                        yield item
            if outcome is None:
                raise RuntimeError("a model call ended without saying how")
            if isinstance(outcome, CallFailed) and outcome.error.kind == "context_overflow" and not overflow_retried:
                overflow_retried = True
                compacted = False
                async for event in self._compact(force=True):
                    compacted = compacted or isinstance(event, Compaction)
                    yield event
                if compacted:
                    continue
            if isinstance(outcome, CallFailed) and outcome.spent is not None:
                self.total = self.total + outcome.spent
                yield self._count(outcome.spent, self.call.provider.name, self.call.model, partial=True)
            reply = await self._take_reply(outcome)
            yield self._count(reply.usage, reply.provider, reply.model)
            if reply.tool_uses and not self.limit_reached and self.loops < self.max_tool_loops:
                async for event in self._tool_round(reply):
                    yield event
                if self.tools.ends_turn:  # a tool's result is the answer: no further model call
                    yield self._done(self.answer_so_far + reply.text, "handed_off")
                    return
                continue
            if reply.tool_uses:
                if await self._refuse_tools(reply):
                    continue
                yield self._done(f"Stopped after {self.loops} tool rounds (the limit).", "max_tool_loops")
                return
            if reply.stop_reason == "max_tokens" and not self.continued:
                self.continued = True
                self.answer_so_far += reply.text
                await self.append(UserMessage(content=(TextBlock(text=CONTINUE_NOTE),)))
                continue
            kept: list[UserMessage] = []
            async for event in self._screen(self.steer.drain(), kept):
                yield event
            if kept:
                # The model answered while the person wrote more: a new turn, same run.
                self.answer_so_far = ""
                self.continued = False
                async for event in self._apply_steering(kept, results=()):
                    yield event
                continue
            text = self.answer_so_far + reply.text
            if not self.limit_reached and self.hooks is not None and self.hooks.wants("Stop"):
                said: list[HookOutcome] = []
                stopping = {"stop_hook_active": self.kept_going > 0, "last_assistant_message": text}
                async for event in fire_on_turn(self.hooks, "Stop", stopping, self.tools.permissions, said):
                    yield event
                if said[0].block is not None and self.kept_going < MAX_CONTINUES:
                    self.kept_going += 1
                    self.answer_so_far, self.continued = "", False
                    await self.append(UserMessage(content=(TextBlock(text=f"{KEEP_GOING}{said[0].block}"),)))
                    continue
            yield self._done(text, "max_tool_loops" if self.limit_reached else reply.stop_reason)
            return

    def _count(self, usage: Usage, provider: str, model: str, *, partial: bool = False) -> UsageUpdate:
        """One call's spend, counted in the run's cost and the budget. `partial`: the call ended before the provider's
        final count, so `usage` is what it had counted — a lower bound, kept by the budget only when it counted any."""
        cost = self.price.cost(usage) if self.price is not None else None
        self.cost = None if cost is None or self.cost is None else self.cost + cost
        self.so_far = self.so_far or partial
        if self.budget is not None and (usage.counted or not partial):
            self.budget.record(provider=provider, model=model, usage=usage, cost=cost, partial=partial)
        return UsageUpdate(usage=usage, total=self.total, cost=cost, total_cost=self.cost, partial=partial)

    async def _tool_round(self, reply: AssistantMessage) -> AsyncGenerator[Event, None]:
        self.loops += 1
        async with aclosing(self.tools.run(reply.tool_uses, truncated=reply.stop_reason == "max_tokens")) as events:
            async for event in events:
                yield event
        steering: list[UserMessage] = []
        async for event in self._screen([] if self.signal.aborted else self.steer.drain(), steering):
            yield event
        async for event in self._apply_steering(steering, results=self.tools.results):
            yield event
        if self.tools.loop_stop:
            raise Stop(self._error(Error(kind="loop", message=f"stopped: {self.tools.loop_stop}")))
        if self.signal.aborted:
            raise Stop(self._error(Error(kind="aborted", message=self.signal.reason)))

    async def _screen(self, steering: list[UserMessage], kept: list[UserMessage]) -> AsyncGenerator[Event, None]:
        """Messages the person sent while the run was busy pass the UserPromptSubmit hooks as the first one did: a
        refused one is dropped (and said), one a hook adds to is joined by what it adds. Kept ones go in `kept`."""
        if self.hooks is None or not steering or not self.hooks.wants("UserPromptSubmit"):
            kept.extend(steering)
            return
        for message in steering:
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            outcomes: list[HookOutcome] = []
            async for event in fire_on_turn(self.hooks, "UserPromptSubmit", {"prompt": text}, self.tools.permissions,
                                            outcomes):  # fmt: skip
                yield event
            said = outcomes[0]
            if said.block is not None:
                yield RunWarning(message=f"A hook refused your message ({text[:60]!r}): {said.block}")
                continue
            added = (TextBlock(text=said.context),) if said.context else ()
            kept.append(replace(message, content=(*message.content, *added)))

    async def _apply_steering(
        self, steering: list[UserMessage], *, results: tuple[ContentBlock, ...]
    ) -> AsyncGenerator[Event, None]:
        """Commit tool results (if any) and steering messages as one user message."""
        extra = [block for message in steering for block in message.content]
        if not results and not extra:
            return
        await self.append(UserMessage(content=(*results, *extra)))
        for message in steering:
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            yield SteerApplied(message_id=message.id, text=text)

    async def _refuse_tools(self, reply: AssistantMessage) -> bool:
        """Answer calls past the tool-round limit without running them (pairing holds). Returns True
        when one tools-free call to wrap up should follow, False when the turn must simply stop."""
        first_time = not self.limit_reached
        note = (TextBlock(text=limit_note(self.max_tool_loops)),) if first_time else ()
        await self.append(UserMessage(content=(*not_run_results(reply.tool_uses, LIMIT_TEXT), *note)))
        self.limit_reached = True
        return first_time

    async def _compact(self, *, force: bool) -> AsyncGenerator[Event, None]:
        async with aclosing(
            self.compactor.run(self.session, fixed=self.fixed_tokens, meter=self.meter, task=self.task, force=force)
        ) as events:
            async for event in events:
                yield event

    async def _take_reply(self, outcome: Outcome) -> AssistantMessage:
        if isinstance(outcome, CallFailed):
            raise Stop(self._error(outcome.error))
        self.total = self.total + outcome.usage
        self.meter.observe(outcome.usage, self.call.sent)
        await self.append(outcome.message)
        return outcome.message

    async def append(self, message: Message) -> None:
        """Append, turning a failed write into the run's final error (never a silent loss)."""
        try:
            await self.session.append(message)
        except OSError as e:
            log.error("session %s: append failed: %s", self.session.id, e)
            reason = f"could not save the conversation: {e.strerror or e}"
            raise Stop(self._error(Error(kind="internal", message=reason))) from e

    def _error(self, error: Error) -> Error:
        return Error(
            kind=error.kind,
            message=error.message,
            partial_text=error.partial_text,
            cause=error.cause,
            attempts=error.attempts,
            usage=self.total,
            tool_loops=self.loops,
            cost=self.cost,
            counted_so_far=self.so_far,
        )

    def _done(self, text: str, stop_reason: StopReason | Literal["max_tool_loops"]) -> Done:
        return Done(
            text=text,
            stop_reason=stop_reason,
            usage=self.total,
            tool_loops=self.loops,
            cost=self.cost,
            timings=Timings(
                provider=self.call.provider_time,
                tools=self.tools.elapsed,
                retry_wait=self.call.retry_wait,
                compaction=self.compactor.elapsed,
                total=time.perf_counter() - self.started,
            ),
        )

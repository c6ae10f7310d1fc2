"""The run loop: one user turn as an async generator of events.

    append the user message once → build the system prompt → resolve the model → stream the
    response (deltas out, tool calls collected) → on tool calls: run them, append their results,
    ask again → otherwise: done.

`Agent.run()` is the only implementation; `Agent.run_to_end()` drains it. Once the generator has
started, failures arrive as an `Error` event (invariant 3); only configuration mistakes raise, and
they raise before anything is written.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from orkas.engine.abort import AbortSignal
from orkas.engine.events import Done, Error, Event, RunStart, Timings, UsageUpdate
from orkas.engine.messages import (
    AssistantMessage,
    Message,
    StopReason,
    TextBlock,
    Usage,
    UserMessage,
    user_text,
)
from orkas.engine.model_call import CallFailed, ModelCall
from orkas.engine.prompt import SystemPrompt
from orkas.engine.providers.base import Reasoning
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.retry import RetryPolicy
from orkas.engine.session import Session
from orkas.engine.tool_runner import ToolRunner, not_run_results
from orkas.engine.tools.base import Tool, ToolSet

log = logging.getLogger(__name__)

ContextOverflowHook = Callable[[Session], Awaitable[bool]]
"""Called when the provider says the context is too long. Returns True if it made room (the call
is then retried once). The compaction issue fills this in."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunConfig:
    model: str
    max_tool_loops: int = 100
    max_tokens: int = 8192
    temperature: float | None = None
    reasoning: Reasoning = "off"
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def __post_init__(self) -> None:
        if self.max_tool_loops < 1:
            raise ValueError(f"max_tool_loops must be at least 1, got {self.max_tool_loops!r}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    text: str
    done: Done | None
    error: Error | None

    @property
    def aborted(self) -> bool:
        return self.error is not None and self.error.aborted


LIMIT_TEXT = "not run: the tool-round limit was reached"


def limit_note(limit: int) -> str:
    return (
        f"[Orkas] This run reached its limit of {limit} tool rounds, so the last tool calls were not "
        "run. Do not call tools now: tell the user what was done, what remains, and how to continue."
    )


class Agent:
    """Binds providers, tools and settings; `run()` executes one user turn on a session."""

    def __init__(
        self,
        *,
        providers: ProviderRegistry,
        config: RunConfig,
        workspace: Path,
        tools: Sequence[Tool] = (),
        system_prompt: SystemPrompt | None = None,
        on_context_overflow: ContextOverflowHook | None = None,
    ) -> None:
        self.providers = providers
        self.config = config
        self.workspace = workspace
        self.tools = ToolSet(tools)
        self.system_prompt = system_prompt or SystemPrompt()
        self.on_context_overflow = on_context_overflow

    async def run(
        self,
        user_input: str | UserMessage,
        *,
        session: Session,
        signal: AbortSignal | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run one user turn. Raises `ConfigError` (before writing anything) for an unknown model;
        every later failure is the final `Error` event. Ends with exactly one `Done` or `Error`."""
        provider, model_id = self.providers.resolve(self.config.model)
        signal = signal or AbortSignal()
        signal.bind()
        message = user_text(user_input) if isinstance(user_input, str) else user_input
        yield RunStart(session_id=session.id, model=f"{provider.name}/{model_id}")
        if signal.aborted:
            yield Error(kind="aborted", message=signal.reason)
            return
        call = ModelCall(
            provider=provider,
            model=model_id,
            config=self.config,
            system=self.system_prompt.build(self.tools.definitions, self.workspace),
            tools=self.tools.definitions,
            session=session,
            signal=signal,
            on_context_overflow=self.on_context_overflow,
        )
        turn = _Turn(self, session, signal, call)
        try:
            await turn.append(message)
            async with aclosing(turn.rounds()) as events:
                async for event in events:
                    yield event
        except _Stop as stop:
            yield stop.event

    async def run_to_end(
        self, user_input: str | UserMessage, *, session: Session, signal: AbortSignal | None = None
    ) -> RunResult:
        """The non-streaming entry point: drains `run()`."""
        last: Event | None = None
        async for event in self.run(user_input, session=session, signal=signal):
            last = event
        if isinstance(last, Done):
            return RunResult(text=last.text, done=last, error=None)
        if isinstance(last, Error):
            return RunResult(text=last.partial_text, done=None, error=last)
        raise AssertionError(f"run ended without done or error: {last!r}")


class _Stop(Exception):
    """Ends the turn with `event` (a failure already turned into the run's final event)."""

    def __init__(self, event: Error) -> None:
        self.event = event


class _Turn:
    """The state of one running turn: the rounds so far, usage, and how to end."""

    def __init__(self, agent: Agent, session: Session, signal: AbortSignal, call: ModelCall) -> None:
        self.config = agent.config
        self.session = session
        self.signal = signal
        self.call = call
        self.tools = ToolRunner(agent.tools, workspace=agent.workspace, signal=signal)
        self.total = Usage()
        self.loops = 0
        self.limit_reached = False
        self.started = time.perf_counter()

    async def rounds(self) -> AsyncGenerator[Event, None]:
        while True:
            async with aclosing(
                self.call.stream(tool_choice="none" if self.limit_reached else "auto")
            ) as events:
                async for event in events:
                    yield event
            reply = await self._take_reply()
            yield UsageUpdate(usage=reply.usage, total=self.total)
            calls = reply.tool_uses
            if not calls:
                yield self._done(reply.text, "max_tool_loops" if self.limit_reached else reply.stop_reason)
                return
            if self.limit_reached or self.loops >= self.config.max_tool_loops:
                # Answer the calls without running them (pairing holds), then one tools-free call
                # to wrap up; a model that still asks for tools after that gets a plain stop.
                note = () if self.limit_reached else (TextBlock(text=limit_note(self.config.max_tool_loops)),)
                await self.append(UserMessage(content=(*not_run_results(calls, LIMIT_TEXT), *note)))
                if self.limit_reached:
                    yield self._done(f"Stopped after {self.loops} tool rounds (the limit).", "max_tool_loops")
                    return
                self.limit_reached = True
                continue
            self.loops += 1
            async with aclosing(self.tools.run(calls)) as events:
                async for event in events:
                    yield event
            await self.append(UserMessage(content=self.tools.results))
            if self.signal.aborted:
                raise _Stop(self._error(Error(kind="aborted", message=self.signal.reason)))

    async def _take_reply(self) -> AssistantMessage:
        outcome = self.call.outcome
        if isinstance(outcome, CallFailed):
            raise _Stop(self._error(outcome.error))
        self.total = self.total + outcome.usage
        await self.append(outcome.message)
        return outcome.message

    async def append(self, message: Message) -> None:
        """Append, turning a failed write into the run's final error (never a silent loss)."""
        try:
            await self.session.append(message)
        except OSError as e:
            log.error("session %s: append failed: %s", self.session.id, e)
            raise _Stop(
                self._error(
                    Error(kind="internal", message=f"could not save the conversation: {e.strerror or e}")
                )
            ) from e

    def _error(self, error: Error) -> Error:
        return Error(
            kind=error.kind,
            message=error.message,
            partial_text=error.partial_text,
            usage=self.total,
            tool_loops=self.loops,
        )

    def _done(self, text: str, stop_reason: StopReason | Literal["max_tool_loops"]) -> Done:
        return Done(
            text=text,
            stop_reason=stop_reason,
            usage=self.total,
            tool_loops=self.loops,
            timings=Timings(
                provider=self.call.provider_time,
                tools=self.tools.elapsed,
                retry_wait=self.call.retry_wait,
                total=time.perf_counter() - self.started,
            ),
        )

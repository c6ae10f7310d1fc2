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

from orkas.engine.abort import AbortSignal
from orkas.engine.events import Done, Error, Event, RunStart, Timings, UsageUpdate
from orkas.engine.messages import Message, TextBlock, Usage, UserMessage, user_text
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
        started = time.perf_counter()
        yield RunStart(session_id=session.id, model=f"{provider.name}/{model_id}")
        if signal.aborted:
            yield Error(kind="aborted", message=signal.reason)
            return
        if (failure := await _append(session, message)) is not None:
            yield failure
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
        tool_runner = ToolRunner(self.tools, workspace=self.workspace, signal=signal)
        total = Usage()
        loops = 0
        limit_reached = False
        while True:
            async with aclosing(call.stream(tool_choice="none" if limit_reached else "auto")) as events:
                async for event in events:
                    yield event
            outcome = call.outcome
            if isinstance(outcome, CallFailed):
                yield _timed(outcome.error, total, loops)
                return
            total = total + outcome.usage
            yield UsageUpdate(usage=outcome.usage, total=total)
            reply = outcome.message
            if (failure := await _append(session, reply)) is not None:
                yield failure
                return
            calls = reply.tool_uses
            if not calls or limit_reached or loops >= self.config.max_tool_loops:
                if calls:
                    # Answer the calls without running them (pairing), then one tools-free call to
                    # wrap up; a model that still asks for tools gets a plain stop.
                    results = not_run_results(calls, "not run: the tool-round limit was reached")
                    note = () if limit_reached else (TextBlock(text=limit_note(self.config.max_tool_loops)),)
                    if (
                        failure := await _append(session, UserMessage(content=(*results, *note)))
                    ) is not None:
                        yield failure
                        return
                    if not limit_reached:
                        limit_reached = True
                        continue
                text = reply.text if not calls else f"Stopped after {loops} tool rounds (the limit)."
                yield Done(
                    text=text,
                    stop_reason="max_tool_loops" if limit_reached else reply.stop_reason,
                    usage=total,
                    tool_loops=loops,
                    timings=Timings(
                        provider=call.provider_time,
                        tools=tool_runner.elapsed,
                        retry_wait=call.retry_wait,
                        total=time.perf_counter() - started,
                    ),
                )
                return
            loops += 1
            async with aclosing(tool_runner.run(calls)) as events:
                async for event in events:
                    yield event
            if (failure := await _append(session, UserMessage(content=tool_runner.results))) is not None:
                yield failure
                return
            if signal.aborted:
                yield Error(kind="aborted", message=signal.reason, usage=total, tool_loops=loops)
                return

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


async def _append(session: Session, message: Message) -> Error | None:
    """Append, turning a failed write into the run's final error (never a silent loss)."""
    try:
        await session.append(message)
    except OSError as e:
        log.error("session %s: append failed: %s", session.id, e)
        return Error(kind="internal", message=f"could not save the conversation: {e.strerror or e}")
    return None


def _timed(error: Error, total: Usage, loops: int) -> Error:
    return Error(
        kind=error.kind, message=error.message, partial_text=error.partial_text, usage=total, tool_loops=loops
    )

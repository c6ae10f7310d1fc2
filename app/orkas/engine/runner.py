"""The run loop: one user turn as an async generator of events.

    append the user message once → build the system prompt → resolve the model → (compact if the
    context is filling up) → stream the response (deltas out, tool calls collected) → on tool calls:
    run them, append their results, ask again → otherwise: done.

`Agent.run()` is the only implementation; `Agent.run_to_end()` drains it. Once the generator has
started, failures arrive as an `Error` event (invariant 3); only configuration mistakes raise, and
they raise before anything is written. The turn itself lives in turn.py.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from pathlib import Path

from orkas.engine.abort import AbortSignal
from orkas.engine.budget import Budget
from orkas.engine.catalog import lookup
from orkas.engine.compaction import Compactor
from orkas.engine.consent import Permissions
from orkas.engine.context import ContextBudget
from orkas.engine.events import Done, Error, Event, RunStart
from orkas.engine.hooks import Hooks, Outcome, fire_on_turn
from orkas.engine.loop_guard import LoopGuard
from orkas.engine.messages import TextBlock, UserMessage, user_text
from orkas.engine.model_call import ModelCall
from orkas.engine.prompt import SystemPrompt
from orkas.engine.providers.base import ToolDefinition
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.run_config import RunConfig
from orkas.engine.session import Session
from orkas.engine.steer import SteerQueue
from orkas.engine.tokens import estimate_json, estimate_tokens
from orkas.engine.tool_runner import ToolRunner
from orkas.engine.tools.base import Tool, ToolSet
from orkas.engine.tools.untrusted import SOURCE, carried
from orkas.engine.tools.untrusted import STATE_KEY as UNTRUSTED_SOURCES
from orkas.engine.turn import Stop, Turn

__all__ = ["Agent", "RunConfig", "RunResult"]  # RunConfig lives in run_config.py; callers may name it here
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    text: str
    done: Done | None
    error: Error | None

    @property
    def aborted(self) -> bool:
        return self.error is not None and self.error.aborted


class Agent:
    """Binds providers, tools and settings; `run()` executes one user turn on a session."""

    def __init__(
        self,
        *,
        providers: ProviderRegistry,
        config: RunConfig,
        workspace: Path,
        tools: Sequence[Tool] | Callable[[], Sequence[Tool]] = (),
        system_prompt: SystemPrompt | None = None,
        hooks: Hooks | None = None,
    ) -> None:
        """`hooks`: the person's checks around this agent's runs (engine/hooks.py). `tools` may be a function that
        makes them: called once, when the first turn starts (after `run_start`), so a run says it started before the
        tools' modules load and their executor is set up."""
        self.providers = providers
        self.config = config
        self.workspace = workspace
        self._tools = tools
        self._toolset: ToolSet | None = None
        self.system_prompt = system_prompt or SystemPrompt()
        self.hooks = hooks
        LoopGuard(warn_at=config.loop_warn_at, stop_at=config.loop_stop_at)  # fail fast on bad limits

    @property
    def tools(self) -> ToolSet:
        if self._toolset is None:
            made = self._tools() if callable(self._tools) else self._tools
            self._toolset = ToolSet(made)
        return self._toolset

    @functools.cached_property
    def _tools_tokens(self) -> int:
        return sum(estimate_json(_as_json(t)) for t in self.tools.definitions)

    def _prepared(self) -> str:
        """The tools made (the first time) and this turn's system prompt built."""
        return self.system_prompt.build(self.tools.definitions, self.workspace)

    async def run(
        self,
        user_input: str | UserMessage,
        *,
        session: Session,
        signal: AbortSignal | None = None,
        steer: SteerQueue | None = None,
        permissions: Permissions | None = None,
        budget: Budget | None = None,
        untrusted: Sequence[str] = (),
    ) -> AsyncGenerator[Event, None]:
        """Run one user turn. Raises `ConfigError` (before writing anything) for an unknown model;
        every later failure is the final `Error` event. Ends with exactly one `Done` or `Error`.
        Messages put on `steer` while the run is busy join it at the next safe point. `untrusted`: what
        outside text the input already carries (a task another agent wrote after reading a web page):
        the turn starts as if it had read it, so a memory write asks first."""
        provider, model_id = self.providers.resolve(self.config.model)
        signal = signal or AbortSignal()
        signal.bind()
        message = user_text(user_input) if isinstance(user_input, str) else user_input
        yield RunStart(session_id=session.id, model=f"{provider.name}/{model_id}")
        if signal.aborted:
            yield Error(kind="aborted", message=signal.reason)
            return
        info = lookup(model_id, context_window=self.config.context_window, local=provider.capabilities.local)
        window = ContextBudget.for_model(info)
        # Off the event loop: the tools are made the first time (their executor probes the confinement), the
        # prompt's sections read files (the skills scanned for their index, a memo, the project's instructions) —
        # work that must neither stall other conversations nor hold back run_start's display.
        system = await asyncio.to_thread(self._prepared)
        turn = Turn(
            max_tool_loops=self.config.max_tool_loops,
            session=session,
            signal=signal,
            steer=steer if steer is not None else SteerQueue(),
            call=ModelCall(
                provider=provider,
                model=model_id,
                retry=self.config.retry,
                temperature=self.config.temperature,
                reasoning=self.config.reasoning,
                system=system,
                tools=self.tools.definitions,
                session=session,
                signal=signal,
                max_tokens=self.config.max_tokens or info.max_output,
            ),
            tools=ToolRunner(
                self.tools,
                workspace=self.workspace,
                signal=signal,
                guard=LoopGuard(warn_at=self.config.loop_warn_at, stop_at=self.config.loop_stop_at),
                max_parallel=self.config.max_parallel_tools,
                permissions=permissions,
                budget=budget,
                hooks=self.hooks,
            ),
            compactor=Compactor(provider=provider, model=model_id, budget=window, signal=signal),
            fixed_tokens=_system_tokens(system) + self._tools_tokens,
            task="".join(b.text for b in message.content if isinstance(b, TextBlock)),
            price=info.price,
            budget=budget,
            hooks=self.hooks,
        )
        # Outside text the model can see from the start: what the input carries, what the prompt marks as data (a
        # folder's instruction files the person has not trusted), what the history still holds.
        already = [*untrusted, *SOURCE.findall(system), *carried(session.messages())]
        if already:
            turn.tools.state[UNTRUSTED_SOURCES] = list(dict.fromkeys(already))
        try:
            if self.hooks is not None and self.hooks.wants("UserPromptSubmit"):
                said: list[Outcome] = []
                prompt = {"prompt": turn.task}
                async for asked in fire_on_turn(self.hooks, "UserPromptSubmit", prompt, turn.tools.permissions, said):
                    yield asked
                if said[0].block is not None:  # the prompt never reaches the model, nor the transcript
                    yield Error(kind="hook", message=f"A hook refused this message: {said[0].block}")
                    return
                if said[0].context:
                    message = replace(message, content=(*message.content, TextBlock(text=said[0].context)))
            await turn.append(message)
            async with aclosing(turn.rounds()) as events:
                async for event in events:
                    yield event
        except Stop as stop:
            yield stop.event

    async def run_to_end(
        self,
        user_input: str | UserMessage,
        *,
        session: Session,
        signal: AbortSignal | None = None,
        steer: SteerQueue | None = None,
        permissions: Permissions | None = None,
        budget: Budget | None = None,
    ) -> RunResult:
        """The non-streaming entry point: drains `run()`."""
        last: Event | None = None
        async for event in self.run(
            user_input, session=session, signal=signal, steer=steer, permissions=permissions, budget=budget
        ):
            last = event
        if isinstance(last, Done):
            return RunResult(text=last.text, done=last, error=None)
        if isinstance(last, Error):
            return RunResult(text=last.partial_text, done=None, error=last)
        raise AssertionError(f"run ended without done or error: {last!r}")


@functools.lru_cache(maxsize=16)
def _system_tokens(system: str) -> int:
    """The system prompt is usually the same run after run: estimate it once."""
    return estimate_tokens(system)


def _as_json(tool: ToolDefinition) -> dict[str, object]:
    return {"name": tool.name, "description": tool.description, "input_schema": dict(tool.input_schema)}

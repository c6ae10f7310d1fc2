"""One model round trip with the retry policy around it.

Before any content has streamed, a retryable failure waits (a `retry` event, interruptible by
abort) and tries again; a context overflow ends the call at once (the run loop compacts and asks
again, once). After
content has streamed, a failure ends the call: the text already shown is kept in the history as a
`partial` assistant message, never streamed twice, and no tool call from that attempt runs.

A call that ends without the provider's final count (the person's Stop, a stream cut) still spent something once
the provider answered: what it had counted by then (`UsageChunk`; nothing, when it counts only at the end) goes
with the failure as `CallFailed.spent` and with the partial message, so the run counts it and a reload shows it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Literal

from orkas.core.errors import PairingError, ProviderError
from orkas.engine.abort import Aborted, AbortSignal, Pump
from orkas.engine.convert import to_llm_messages
from orkas.engine.events import Error, Event, ProviderFallback, Retry, TextDelta, ThinkingDelta
from orkas.engine.messages import AssistantMessage, TextBlock, Usage
from orkas.engine.providers.base import (
    FallbackChunk,
    MessageEnd,
    Provider,
    ProviderRequest,
    Reasoning,
    TextDeltaChunk,
    ThinkingDeltaChunk,
    ToolCallChunk,
    ToolDefinition,
    UsageChunk,
)
from orkas.engine.retry import RetryPolicy, describe, error_kind, is_retryable
from orkas.engine.session import Session

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CallSucceeded:
    message: AssistantMessage
    usage: Usage


@dataclass(frozen=True, slots=True)
class CallFailed:
    error: Error
    spent: Usage | None = None  # the provider answered, then the call ended: what it had counted (at least this)


@dataclass(frozen=True, slots=True)
class AttemptSpent:
    """An attempt that failed and is tried again had been counted by the provider (its input, at least): the run
    counts it (it was paid for) before the retry's own call."""

    usage: Usage


Outcome = CallSucceeded | CallFailed


class _Failed(Exception):
    def __init__(self, error: Error) -> None:
        self.error = error


class ModelCall:
    """Streams one model response for a run; reusable for each round of the same run."""

    def __init__(
        self,
        *,
        provider: Provider,
        model: str,
        retry: RetryPolicy,
        temperature: float | None,
        reasoning: Reasoning,
        system: str,
        tools: Sequence[ToolDefinition],
        session: Session,
        signal: AbortSignal,
        max_tokens: int,
    ) -> None:
        self.provider = provider
        self.model = model
        self.retry = retry
        self.temperature = temperature
        self.reasoning = reasoning
        self.system = system
        self.tools = tools
        self.session = session
        self.signal = signal
        self.max_tokens = max_tokens
        self.sent = 0  # history entries the last request was built from
        self.provider_time = 0.0
        self.retry_wait = 0.0
        self._retries_shown = 0  # retry numbers stay monotonic across rounds of one run

    async def stream(
        self, *, tool_choice: Literal["auto", "none"]
    ) -> AsyncGenerator[Event | AttemptSpent | Outcome, None]:
        """Yield the events of one response (and what each retried attempt was counted), then exactly one `Outcome`
        saying how it ended."""
        attempt = 0
        while True:
            if self.signal.aborted:
                yield CallFailed(Error(kind="aborted", message=self.signal.reason))
                return
            state = _Attempt()
            try:
                async with aclosing(self._attempt(state, tool_choice)) as events:
                    async for event in events:
                        yield event
                return
            except ProviderError as error:
                if state.started:
                    yield CallFailed(await self._keep_partial(state, error), state.spent)
                    return
                if not is_retryable(error) or attempt >= self.retry.max_retries:
                    kind, tries = error_kind(error), attempt + 1
                    error_event = Error(kind=kind, message=describe(error), cause=error.kind, attempts=tries)
                    yield CallFailed(error_event, state.spent)
                    return
                if state.usage is not None and state.usage.counted:
                    yield AttemptSpent(state.usage)
                attempt += 1
                self._retries_shown += 1
                wait = self.retry.wait(attempt, error)
                log.info("provider call %s/%s: retry %d in %.1f s", self.provider.name, self.model, attempt, wait)
                yield Retry(attempt=self._retries_shown, reason=describe(error), wait=wait)
                slept_from = time.perf_counter()
                completed = await self.signal.sleep(wait)
                self.retry_wait += time.perf_counter() - slept_from
                if not completed:
                    yield CallFailed(Error(kind="aborted", message=self.signal.reason))
                    return
            except Aborted:
                yield CallFailed(await self._keep_partial(state, None), state.spent)
                return
            except _Failed as failed:
                yield CallFailed(failed.error, state.spent)
                return

    async def _attempt(
        self, state: _Attempt, tool_choice: Literal["auto", "none"]
    ) -> AsyncGenerator[Event | Outcome, None]:
        request = ProviderRequest(
            model=self.model,
            messages=to_llm_messages(
                self.session.messages(),
                self.provider.capabilities,
                provider=self.provider.name,
                model=self.model,
            ),
            system=self.system,
            tools=self.tools,
            tool_choice=tool_choice,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            reasoning=self.reasoning,
            session_id=self.session.id,
        )
        started = time.perf_counter()
        end: MessageEnd | None = None
        chunks = Pump(self.provider.stream(request), self.signal)
        try:
            async for chunk in chunks:
                if isinstance(chunk, TextDeltaChunk):
                    state.started = True
                    state.text.append(chunk.text)
                    yield TextDelta(text=chunk.text)
                elif isinstance(chunk, ThinkingDeltaChunk):
                    state.started = True
                    yield ThinkingDelta(text=chunk.text)
                elif isinstance(chunk, ToolCallChunk):
                    state.started = True
                elif isinstance(chunk, UsageChunk):
                    state.usage = chunk.usage
                elif isinstance(chunk, FallbackChunk):
                    yield ProviderFallback(
                        reason=chunk.reason, failed=chunk.failed, using=chunk.using, message=chunk.message
                    )
                elif isinstance(chunk, MessageEnd):
                    end = chunk
        except ProviderError as error:  # info: the run reports it to the person; the log keeps the details
            log.info(
                "provider call %s/%s failed after %.0f ms: %s (%s)",
                self.provider.name,
                self.model,
                (time.perf_counter() - started) * 1000,
                describe(error),
                error_kind(error),
            )
            raise
        except (Aborted, _Failed):
            raise
        except Exception as bug:  # an adapter bug must not take the app down with it
            log.exception("provider %s raised an unexpected error", self.provider.name)
            raise _Failed(
                Error(
                    kind="internal",
                    message=f"internal error in provider {self.provider.name}: {type(bug).__name__}: {bug}",
                )
            ) from bug
        finally:
            await chunks.aclose()
            self.provider_time += time.perf_counter() - started
        if end is None:
            raise ProviderError(
                "the response stream ended before the message was complete",
                kind="network",
                provider=self.provider.name,
            )
        log.info(
            "provider call %s/%s ok in %.0f ms: %d in, %d out tokens, stop %s",
            self.provider.name,
            self.model,
            (time.perf_counter() - started) * 1000,
            end.usage.input_tokens,
            end.usage.output_tokens,
            end.message.stop_reason,
        )
        yield CallSucceeded(end.message, end.usage)

    async def _keep_partial(self, state: _Attempt, error: ProviderError | None) -> Error:
        """Record what the person already saw, marked partial; its unfinished tool calls are dropped."""
        text = "".join(state.text)
        if text:
            partial = AssistantMessage(
                content=(TextBlock(text=text),),
                provider=self.provider.name,
                model=self.model,
                stop_reason="aborted" if error is None else "error",
                usage=state.usage or Usage(),
                partial=True,
            )
            try:
                await self.session.append(partial)
            except (OSError, PairingError) as e:
                log.error("could not keep partial text: %s", e)
        if error is None:
            return Error(kind="aborted", message=self.signal.reason, partial_text=text)
        message = describe(error)
        if text:
            message = f"the response was cut off: {message}"
        return Error(kind=error_kind(error), message=message, partial_text=text, cause=error.kind, attempts=1)


class _Attempt:
    __slots__ = ("started", "text", "usage")

    def __init__(self) -> None:
        self.started = False
        self.text: list[str] = []
        self.usage: Usage | None = None  # the provider's count so far (`UsageChunk`)

    @property
    def spent(self) -> Usage | None:
        """What an attempt that ends now is known to have spent: the provider's count, none counted (a provider that
        counts only at the end) once content came, or None when the provider never answered."""
        if self.usage is not None:
            return self.usage
        return Usage() if self.started else None

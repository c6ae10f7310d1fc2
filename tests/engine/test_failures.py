"""Retries, non-retryable failures, mid-stream failures, context overflow and abort."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from orkas.core.errors import ProviderError
from orkas.engine.abort import AbortSignal
from orkas.engine.events import Compaction, Done, Error, Retry, TextDelta, ToolEnd, ToolStart
from orkas.engine.messages import AssistantMessage, Message, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from orkas.engine.providers.base import TextDeltaChunk
from orkas.engine.retry import RetryPolicy
from orkas.engine.session import InMemorySession, check_append
from tests.engine.helpers import collect, make_agent, types
from tests.engine.tools_for_tests import Echo, Slow, StopsTheRun
from tests.fakes.scripted import Gate, ScriptedProvider, text, tool_call, tool_calls


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path


def err(kind: str, status: int | None = None, retry_after: float | None = None) -> ProviderError:
    return ProviderError(f"simulated {kind}", kind=kind, status=status, retry_after=retry_after)  # type: ignore[arg-type]


def user_messages(history: list[Message] | tuple[Message, ...]) -> list[UserMessage]:
    return [
        m for m in history if isinstance(m, UserMessage) and not any(isinstance(b, ToolResultBlock) for b in m.content)
    ]


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        ("timeout", 408),
        ("conflict", 409),
        ("rate_limit", 429),
        ("server", 500),
        ("server", 502),
        ("server", 503),
        ("server", 504),
        ("overloaded", 529),
        ("network", None),
        ("timeout", None),
        ("stream", None),
    ],
)
async def test_retryable_failures_are_retried_and_the_user_message_is_written_once(
    workspace: Path, kind: str, status: int | None
) -> None:
    provider = ScriptedProvider([err(kind, status)], [err(kind, status)], text("finally"))
    session = InMemorySession()
    events = await collect(make_agent(provider, workspace), session=session)
    retries = [e for e in events if isinstance(e, Retry)]
    assert [r.attempt for r in retries] == [1, 2]
    assert all("simulated" in r.reason for r in retries)
    assert isinstance(events[-1], Done) and events[-1].text == "finally"
    assert len(user_messages(session.messages())) == 1  # invariant 2
    assert len(session.messages()) == 2
    provider.verify()


async def test_retries_give_up_after_the_configured_attempts(workspace: Path) -> None:
    provider = ScriptedProvider(*([err("overloaded", 529)] for _ in range(3)))
    events = await collect(make_agent(provider, workspace, retry=RetryPolicy(max_retries=2, base_delay=0.001)))
    assert types(events).count("retry") == 2
    error = events[-1]
    assert isinstance(error, Error) and error.kind == "provider" and "529" in error.message
    provider.verify()


async def test_retry_after_is_honoured(workspace: Path) -> None:
    provider = ScriptedProvider([err("rate_limit", 429, retry_after=0.2)], text("ok"))
    started = time.perf_counter()
    events = await collect(make_agent(provider, workspace))
    elapsed = time.perf_counter() - started
    retry = next(e for e in events if isinstance(e, Retry))
    assert retry.wait == pytest.approx(0.2)
    assert elapsed >= 0.2
    assert isinstance(events[-1], Done) and events[-1].timings.retry_wait >= 0.19


@pytest.mark.parametrize(
    ("kind", "status", "event_kind"),
    [
        ("bad_request", 400, "provider"),
        ("auth", 401, "auth"),
        ("auth", 403, "auth"),
        ("not_found", 404, "provider"),
        ("bad_request", 413, "provider"),
        ("bad_request", 422, "provider"),
        ("content_policy", 400, "provider"),
        ("billing", 402, "provider"),
    ],
)
async def test_non_retryable_failures_end_the_run_at_once(
    workspace: Path, kind: str, status: int, event_kind: str
) -> None:
    provider = ScriptedProvider([err(kind, status)])
    events = await collect(make_agent(provider, workspace))
    assert "retry" not in types(events)
    error = events[-1]
    assert isinstance(error, Error) and error.kind == event_kind
    assert f"HTTP {status}" in error.message
    assert len(provider.requests) == 1
    provider.verify()


async def test_failure_after_text_keeps_it_marked_and_does_not_retry(workspace: Path) -> None:
    provider = ScriptedProvider([TextDeltaChunk(text="Half an ans"), err("network")])
    session = InMemorySession()
    events = await collect(make_agent(provider, workspace), session=session)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Half an ans"]
    error = events[-1]
    assert isinstance(error, Error) and error.partial_text == "Half an ans" and "cut off" in error.message
    kept = session.messages()[-1]
    assert isinstance(kept, AssistantMessage) and kept.partial and kept.text == "Half an ans"
    assert kept.stop_reason == "error"
    provider.verify()  # exactly one call: no retry after content


async def test_failure_after_a_tool_call_started_runs_no_tool(workspace: Path) -> None:
    echo = Echo()
    step = list(tool_call("echo", {"text": "x"}, say="Let me check."))
    step[-1] = err("network")  # the stream breaks before the message completes
    provider = ScriptedProvider(step)
    session = InMemorySession()
    events = await collect(make_agent(provider, workspace, tools=[echo]), session=session)
    assert isinstance(events[-1], Error)
    assert echo.calls == []
    assert not any(isinstance(m, AssistantMessage) and m.tool_uses for m in session.messages())
    provider.verify()


async def test_next_turn_after_a_partial_answer_works(workspace: Path) -> None:
    provider = ScriptedProvider([TextDeltaChunk(text="partial"), err("network")], text("complete"))
    session = InMemorySession()
    agent = make_agent(provider, workspace)
    await collect(agent, "first", session=session)
    events = await collect(agent, "again please", session=session)
    assert isinstance(events[-1], Done) and events[-1].text == "complete"
    roles = [m.role for m in session.messages()]
    assert roles == ["user", "assistant", "user", "assistant"]
    provider.verify()


def earlier_turn(first_prompt: str, output: str) -> list[Message]:
    call = AssistantMessage(
        content=(ToolUseBlock(id="old1", name="echo", input={"text": "x"}),),
        provider="scripted",
        model="scripted-model",
    )
    result = UserMessage(content=(ToolResultBlock(tool_use_id="old1", content=(TextBlock(text=output),)),))
    done = AssistantMessage(content=(TextBlock(text="done with that"),), provider="scripted", model="scripted-model")
    return [UserMessage(content=(TextBlock(text=first_prompt),)), call, result, done]


async def test_context_overflow_masks_old_outputs_and_retries_once(workspace: Path) -> None:
    provider = ScriptedProvider([err("context_overflow", 400)], text("fits now"))
    session = InMemorySession(history=earlier_turn("first task", "lorem ipsum " * 600))
    agent = make_agent(provider, workspace, context_window=8000)
    events = await collect(agent, "second task", session=session)
    compaction = next(e for e in events if isinstance(e, Compaction))
    assert compaction.method == "mask" and compaction.tokens_after < compaction.tokens_before
    assert isinstance(events[-1], Done) and events[-1].text == "fits now"
    retried = provider.requests[1].messages
    masked = retried[2].content[0]
    assert isinstance(masked, ToolResultBlock) and "masked to save context" in masked.content[0].text  # type: ignore[union-attr]
    provider.verify()


async def test_context_overflow_summarizes_when_masking_is_not_enough(workspace: Path) -> None:
    provider = ScriptedProvider([err("context_overflow", 400)], text("SUMMARY: the user wanted a poem."), text("ok"))
    long_prompt = "please write a poem about the sea " * 250
    correction = UserMessage(content=(TextBlock(text="Use British spelling, and no rhymes."),))
    reply = AssistantMessage(content=(TextBlock(text="noted"),), provider="scripted", model="scripted-model")
    session = InMemorySession(history=[*earlier_turn(long_prompt, "short"), correction, reply])
    events = await collect(make_agent(provider, workspace, context_window=8000), "now a haiku", session=session)
    compaction = next(e for e in events if isinstance(e, Compaction))
    assert compaction.method == "summary" and isinstance(events[-1], Done)
    summary_request = provider.requests[1]
    assert (
        summary_request.tools == () and summary_request.tool_choice == "none" and "compaction" in summary_request.system
    )
    assert long_prompt[:200] in summary_request.messages[0].content[0].text  # type: ignore[union-attr]
    final = provider.requests[2].messages
    opening = final[0].content[0]
    assert isinstance(opening, TextBlock) and "SUMMARY: the user wanted a poem." in opening.text
    sent = " ".join(b.text for m in final for b in m.content if isinstance(b, TextBlock))
    assert "Use British spelling, and no rhymes." in sent  # the user's own words, verbatim
    assert long_prompt not in opening.text  # a pasted wall of text is summarized, not pinned
    provider.verify()


async def test_context_overflow_with_nothing_to_compact_is_an_error(workspace: Path) -> None:
    provider = ScriptedProvider([err("context_overflow", 400)])
    events = await collect(make_agent(provider, workspace))
    error = events[-1]
    assert isinstance(error, Error) and error.kind == "context_overflow"
    assert "too long" in error.message
    provider.verify()


# --- abort -----------------------------------------------------------------------------------------


async def test_abort_before_the_run_writes_nothing(workspace: Path) -> None:
    signal = AbortSignal()
    signal.abort()
    provider = ScriptedProvider()
    session = InMemorySession()
    events = await collect(make_agent(provider, workspace), session=session, signal=signal)
    assert isinstance(events[-1], Error) and events[-1].aborted
    assert session.messages() == [] and provider.requests == []


async def test_abort_while_streaming_stops_at_once_and_keeps_the_text(workspace: Path) -> None:
    gate = Gate()
    provider = ScriptedProvider([TextDeltaChunk(text="Thinking about"), gate, TextDeltaChunk(text=" never")])
    signal = AbortSignal()
    session = InMemorySession()
    agent = make_agent(provider, workspace)

    async def stop_when_reached() -> None:
        await gate.reached.wait()
        signal.abort("user clicked stop")

    stopper = asyncio.create_task(stop_when_reached())
    started = time.perf_counter()
    events = await collect(agent, session=session, signal=signal)
    await stopper
    assert time.perf_counter() - started < 1.0
    error = events[-1]
    assert isinstance(error, Error) and error.aborted and error.message == "user clicked stop"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Thinking about"
    kept = session.messages()[-1]
    assert isinstance(kept, AssistantMessage) and kept.partial and kept.stop_reason == "aborted"
    assert "retry" not in types(events)


async def test_abort_during_a_retry_wait_starts_no_new_attempt(workspace: Path) -> None:
    provider = ScriptedProvider([err("rate_limit", 429, retry_after=30.0)])
    signal = AbortSignal()
    agent = make_agent(provider, workspace)
    events = []
    started = time.perf_counter()
    async for event in agent.run("hi", session=InMemorySession(), signal=signal):
        events.append(event)
        if isinstance(event, Retry):
            asyncio.get_running_loop().call_later(0.05, signal.abort)
    assert time.perf_counter() - started < 2.0
    assert isinstance(events[-1], Error) and events[-1].aborted
    assert len(provider.requests) == 1
    provider.verify()


async def test_abort_during_a_tool_cancels_it_and_answers_every_call(workspace: Path) -> None:
    slow = Slow()
    echo = Echo()
    provider = ScriptedProvider(tool_calls([("slow", {}, "s1"), ("echo", {"text": "x"}, "e1")]))
    signal = AbortSignal()
    session = InMemorySession()

    async def stop_when_started() -> None:
        await slow.started.wait()
        signal.abort()

    stopper = asyncio.create_task(stop_when_started())
    events = await collect(make_agent(provider, workspace, tools=[slow, echo]), session=session, signal=signal)
    await stopper
    assert slow.cancelled and slow.finished == 0 and echo.calls == []
    assert isinstance(events[-1], Error) and events[-1].aborted
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.is_error and "aborted" in end.content[0].text  # type: ignore[union-attr]
    results = session.messages()[-1]
    assert isinstance(results, UserMessage)
    assert [b.tool_use_id for b in results.content if isinstance(b, ToolResultBlock)] == ["s1", "e1"]
    assert all(b.is_error for b in results.content if isinstance(b, ToolResultBlock))
    provider.verify()


async def test_abort_between_tools_skips_the_rest_and_makes_no_more_calls(workspace: Path) -> None:
    echo = Echo()
    provider = ScriptedProvider(tool_calls([("stopper", {}, "a"), ("echo", {"text": "x"}, "b")]))
    session = InMemorySession()
    events = await collect(make_agent(provider, workspace, tools=[StopsTheRun(), echo]), session=session)
    assert echo.calls == [] and isinstance(events[-1], Error) and events[-1].aborted
    assert [e.id for e in events if isinstance(e, ToolStart)] == ["a"]  # "b" never started
    results = session.messages()[-1]
    assert isinstance(results, UserMessage)
    assert [b.is_error for b in results.content if isinstance(b, ToolResultBlock)] == [False, True]
    assert len(provider.requests) == 1
    provider.verify()


async def test_an_aborted_session_accepts_the_next_turn(workspace: Path) -> None:
    provider = ScriptedProvider(tool_calls([("stopper", {}, "a")]), text("resumed"))
    session = InMemorySession()
    agent = make_agent(provider, workspace, tools=[StopsTheRun()])
    await collect(agent, "first", session=session)
    events = await collect(agent, "continue", session=session)
    assert isinstance(events[-1], Done) and events[-1].text == "resumed"
    history = list(session.messages())
    replay = InMemorySession(history=history)  # the whole history passes the pairing check
    assert len(replay.messages()) == len(history)
    for i in range(1, len(history)):
        check_append(history[:i], history[i])
    provider.verify()


async def test_a_failed_session_write_is_an_error_the_caller_sees(workspace: Path) -> None:
    class FullDisk(InMemorySession):
        async def append(self, message: Message) -> None:
            if isinstance(message, AssistantMessage):
                raise OSError(28, "No space left on device")
            await super().append(message)

    provider = ScriptedProvider(text("lost?"))
    events = await collect(make_agent(provider, workspace), session=FullDisk())
    error = events[-1]
    assert isinstance(error, Error) and error.kind == "internal"
    assert "No space left on device" in error.message


@pytest.mark.parametrize("reason", ["stopped by the user", "Orkas was closed"])
async def test_a_tool_cut_short_says_whether_the_person_stopped_it_or_orkas_closed(
    workspace: Path, reason: str
) -> None:
    # After a quit and a restart, the chat said "the user stopped the run": they had stopped nothing.
    from orkas.engine.tool_runner import CLOSED

    slow = Slow()
    provider = ScriptedProvider(tool_calls([("slow", {}, "s1")]))
    signal = AbortSignal()

    async def stop_when_started() -> None:
        await slow.started.wait()
        signal.abort(reason)

    stopper = asyncio.create_task(stop_when_started())
    events = await collect(make_agent(provider, workspace, tools=[slow]), session=InMemorySession(), signal=signal)
    await stopper
    said = next(e for e in events if isinstance(e, ToolEnd)).content[0].text  # type: ignore[union-attr]
    assert ("Orkas was closed" in said) == (reason == CLOSED) and ("the user stopped" in said) == (reason != CLOSED)
    provider.verify()

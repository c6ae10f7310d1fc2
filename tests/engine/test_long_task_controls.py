"""Loop guard, parallel read-only tools, interrupt-steer, output-limit continuation, the context meter."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from orkas.engine.context import ContextMeter
from orkas.engine.events import Done, Error, LoopWarning, SteerApplied, TextDelta, ToolEnd, ToolStart
from orkas.engine.messages import TextBlock, ToolResultBlock, Usage, UserMessage, user_text
from orkas.engine.providers.base import TextDeltaChunk
from orkas.engine.session import InMemorySession
from orkas.engine.steer import SteerQueue
from orkas.engine.tokens import estimate_messages
from orkas.engine.tools.base import ToolContext, ToolResult, text_result
from orkas.engine.turn import CONTINUE_NOTE
from tests.engine.helpers import collect, make_agent, types
from tests.engine.tools_for_tests import Echo, Slow
from tests.fakes.scripted import Gate, ScriptedProvider, end, text, tool_call, tool_calls


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path


@dataclass
class Sleepy:
    """A read-only tool with a fixed latency that records when it ran."""

    delay: float
    name: str = "sleepy"
    description: str = "Waits, then answers."
    read_only: bool = True
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    spans: list[tuple[float, float]] = field(default_factory=list)

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        began = time.perf_counter()
        await asyncio.sleep(self.delay * float(input.get("factor", 1)))
        self.spans.append((began, time.perf_counter()))
        return text_result(f"slept {input.get('factor', 1)}")


# --- loop guard ------------------------------------------------------------------------------------


async def test_the_third_identical_call_warns_and_the_fifth_stops(workspace: Path) -> None:
    echo = Echo()
    same = [tool_call("echo", {"text": "again"}) for _ in range(5)]
    provider = ScriptedProvider(*same)
    session = InMemorySession()
    events = await collect(make_agent(provider, workspace, tools=[echo]), session=session)
    warnings = [e for e in events if isinstance(e, LoopWarning)]
    assert [w.count for w in warnings] == [3, 4] and warnings[0].stop_at == 5
    third = [e for e in events if isinstance(e, ToolEnd)][2]
    assert "3th identical echo call" in third.content[-1].text  # type: ignore[union-attr]
    error = events[-1]
    assert isinstance(error, Error) and error.kind == "loop" and "5 times in a row" in error.message
    assert len(echo.calls) == 4  # the fifth never ran
    last = session.messages()[-1]
    assert isinstance(last, UserMessage) and isinstance(last.content[0], ToolResultBlock)
    provider.verify()


async def test_a_different_call_resets_the_count(workspace: Path) -> None:
    steps = [tool_call("echo", {"text": t}) for t in ["a", "a", "b", "a", "a", "b", "a", "a"]]
    provider = ScriptedProvider(*steps, text("done"))
    events = await collect(make_agent(provider, workspace, tools=[Echo()]))
    assert not [e for e in events if isinstance(e, LoopWarning)] and isinstance(events[-1], Done)
    provider.verify()


# --- parallel read-only tools ----------------------------------------------------------------------------


async def test_read_only_calls_run_together_and_answer_in_declared_order(workspace: Path) -> None:
    sleepy = Sleepy(delay=0.2)
    calls = [("sleepy", {"factor": f}, f"s{i}") for i, f in enumerate([3, 1, 2, 1, 1])]
    provider = ScriptedProvider(tool_calls(calls), text("ok"))
    session = InMemorySession()
    started = time.perf_counter()
    events = await collect(make_agent(provider, workspace, tools=[sleepy]), session=session)
    elapsed = time.perf_counter() - started
    assert elapsed < 0.2 * 3 + 0.25  # about the slowest (0.6 s), not the sum (1.6 s)
    finished = [e.id for e in events if isinstance(e, ToolEnd)]
    assert finished[-1] == "s0"  # the slowest finished last...
    results = session.messages()[2]
    assert isinstance(results, UserMessage)
    assert [b.tool_use_id for b in results.content if isinstance(b, ToolResultBlock)] == ["s0", "s1", "s2", "s3", "s4"]
    provider.verify()


async def test_a_write_is_a_barrier(workspace: Path) -> None:
    sleepy = Sleepy(delay=0.1)
    slow = Slow()
    slow.release.set()
    calls = [("sleepy", {}, "r1"), ("sleepy", {}, "r2"), ("slow", {}, "w"), ("sleepy", {}, "r3")]
    provider = ScriptedProvider(tool_calls(calls), text("ok"))
    events = await collect(make_agent(provider, workspace, tools=[sleepy, slow]))
    order = [(e.type, e.id) for e in events if isinstance(e, ToolStart | ToolEnd)]
    w_start = order.index(("tool_start", "w"))
    assert ("tool_end", "r1") in order[:w_start] and ("tool_end", "r2") in order[:w_start]
    assert order.index(("tool_start", "r3")) > order.index(("tool_end", "w"))
    provider.verify()


async def test_the_concurrency_cap_is_respected(workspace: Path) -> None:
    sleepy = Sleepy(delay=0.05)
    calls = [("sleepy", {"n": i}, f"c{i}") for i in range(6)]
    provider = ScriptedProvider(tool_calls(calls), text("ok"))
    await collect(make_agent(provider, workspace, tools=[sleepy], max_parallel_tools=2))
    moments = sorted([(b, 1) for b, _ in sleepy.spans] + [(e, -1) for _, e in sleepy.spans])
    running = peak = 0
    for _, delta in moments:
        running += delta
        peak = max(peak, running)
    assert peak == 2
    provider.verify()


# --- interrupt-steer -------------------------------------------------------------------------------


async def test_a_steer_during_a_tool_joins_the_current_turn(workspace: Path) -> None:
    slow = Slow()
    steer = SteerQueue()
    provider = ScriptedProvider(tool_call("slow", {}, id="t1"), text("adjusted"))
    session = InMemorySession()

    async def send_steer() -> None:
        await slow.started.wait()
        steer.put("also check the tests folder")
        slow.release.set()

    helper = asyncio.create_task(send_steer())
    events = [e async for e in make_agent(provider, workspace, tools=[slow]).run("go", session=session, steer=steer)]
    await helper
    applied = [e for e in events if isinstance(e, SteerApplied)]
    assert [a.text for a in applied] == ["also check the tests folder"]
    results = session.messages()[2]
    assert isinstance(results, UserMessage)
    assert isinstance(results.content[0], ToolResultBlock)
    assert results.content[-1] == TextBlock(text="also check the tests folder")
    assert provider.requests[1].messages[-1] == results  # the model saw it on the next call
    assert isinstance(events[-1], Done) and len(steer) == 0
    provider.verify()


async def test_a_steer_during_the_final_answer_starts_a_new_turn_in_the_same_run(workspace: Path) -> None:
    gate = Gate()
    steer = SteerQueue()
    provider = ScriptedProvider(
        [TextDeltaChunk(text="Here is"), gate, end(TextBlock(text="Here is"))], text("Sure, shorter.")
    )
    session = InMemorySession()

    async def send_steer() -> None:
        await gate.reached.wait()
        steer.put("make it shorter")
        gate.opened.set()

    helper = asyncio.create_task(send_steer())
    events = [e async for e in make_agent(provider, workspace).run("write", session=session, steer=steer)]
    await helper
    assert [e.text for e in events if isinstance(e, SteerApplied)] == ["make it shorter"]
    assert isinstance(events[-1], Done) and events[-1].text == "Sure, shorter."
    assert [m.role for m in session.messages()] == ["user", "assistant", "user", "assistant"]
    provider.verify()


async def test_a_steer_queued_before_the_first_answer_is_not_lost(workspace: Path) -> None:
    steer = SteerQueue()
    steer.put("in French please")
    provider = ScriptedProvider(text("Hello"), text("Bonjour"))
    events = [e async for e in make_agent(provider, workspace).run("greet", session=InMemorySession(), steer=steer)]
    assert isinstance(events[-1], Done) and events[-1].text == "Bonjour"
    assert types(events).count("steer_applied") == 1
    provider.verify()


async def test_a_steer_after_the_run_ended_waits_for_the_next_turn(workspace: Path) -> None:
    steer = SteerQueue()
    provider = ScriptedProvider(text("done"))
    agent = make_agent(provider, workspace)
    events = [e async for e in agent.run("go", session=InMemorySession(), steer=steer)]
    steer.put("one more thing")
    assert isinstance(events[-1], Done) and len(steer) == 1  # still queued: the caller's next turn
    assert steer.drain()[0].content == (TextBlock(text="one more thing"),)


async def test_a_steer_is_not_applied_after_an_abort(workspace: Path) -> None:
    from tests.engine.tools_for_tests import StopsTheRun

    steer = SteerQueue()
    steer.put("keep going")
    provider = ScriptedProvider(tool_call("stopper", {}))
    events = [
        e
        async for e in make_agent(provider, workspace, tools=[StopsTheRun()]).run(
            "go", session=InMemorySession(), steer=steer
        )
    ]
    assert isinstance(events[-1], Error) and events[-1].aborted and len(steer) == 1


# --- output limit -------------------------------------------------------------------------------------


async def test_prose_cut_by_the_output_limit_gets_one_continuation(workspace: Path) -> None:
    first = [TextDeltaChunk(text="The answer is forty"), end(TextBlock(text="The answer is forty"), stop="max_tokens")]
    second = [TextDeltaChunk(text="-two."), end(TextBlock(text="-two."), stop="max_tokens")]
    provider = ScriptedProvider(first, second)
    session = InMemorySession()
    events = await collect(make_agent(provider, workspace), session=session)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The answer is forty-two."
    done = events[-1]
    assert isinstance(done, Done) and done.text == "The answer is forty-two." and done.stop_reason == "max_tokens"
    note = provider.requests[1].messages[-1]
    assert note == UserMessage(content=(TextBlock(text=CONTINUE_NOTE),), id=note.id, created_at=note.created_at)
    provider.verify()  # only one continuation, even though the second reply was cut too


async def test_the_main_turn_uses_the_model_output_limit_and_overrides_apply(workspace: Path) -> None:
    provider = ScriptedProvider(text("a"), text("b"))
    await collect(make_agent(provider, workspace))
    await collect(make_agent(provider, workspace, max_tokens=1234))
    assert [r.max_tokens for r in provider.requests] == [8192, 1234]


# --- context meter -------------------------------------------------------------------------------------


def test_the_meter_trusts_reported_usage_plus_what_was_added() -> None:
    history = [user_text("x " * 400), user_text("y " * 400)]
    meter = ContextMeter()
    assert meter.estimate(100, history) == 100 + estimate_messages(history)
    meter.observe(Usage(input_tokens=50, cache_read_tokens=950), sent=1)
    assert meter.estimate(100, history) == 1000 + estimate_messages(history[1:])
    meter.observe(Usage(), sent=2)  # a provider that reports nothing does not erase what we know
    assert meter.estimate(100, history) == 1000 + estimate_messages(history[1:])
    meter.reset()
    assert meter.estimate(100, history) == 100 + estimate_messages(history)

"""Usage and cost per call, run, conversation and day; budgets that stop new calls."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from orkas.adapter.settings.usage import LedgerBudget, UsageLedger
from orkas.engine.abort import AbortSignal
from orkas.engine.catalog import lookup
from orkas.engine.events import Done, Error, UsageUpdate
from orkas.engine.messages import AssistantMessage, Usage
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.session import InMemorySession
from tests.conftest import subprocess_env
from tests.fakes import anthropic as a_wire
from tests.fakes.scripted import Gate, ScriptedProvider, end, text
from tests.fakes.server import FakeServer

ORKAS = str(Path(sys.executable).parent / "orkas")


def priced_step(reply: str, input_tokens: int, output_tokens: int) -> list[object]:
    from orkas.engine.messages import TextBlock
    from orkas.engine.providers.base import TextDeltaChunk

    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return [TextDeltaChunk(text=reply), end(TextBlock(text=reply), usage=usage, model="claude-sonnet-4-5")]


def agent(provider: ScriptedProvider, tmp_path: Path) -> Agent:
    return Agent(
        providers=ProviderRegistry({"scripted": provider}),
        config=RunConfig(model="scripted/claude-sonnet-4-5"),
        workspace=tmp_path,
    )


def test_prices_come_from_the_catalogue() -> None:
    sonnet = lookup("claude-sonnet-4-5").price
    assert sonnet is not None and sonnet.cost(Usage(input_tokens=1_000_000, output_tokens=100_000)) == 4.5
    assert lookup("qwen3", local=True).price.cost(Usage(input_tokens=10**6)) == 0.0  # type: ignore[union-attr]
    assert lookup("some-unknown-model").price is None


async def test_each_call_and_the_run_report_their_cost(tmp_path: Path) -> None:
    provider = ScriptedProvider(priced_step("hello", 10_000, 1_000))
    events = [e async for e in agent(provider, tmp_path).run("hi", session=InMemorySession())]
    update = next(e for e in events if isinstance(e, UsageUpdate))
    assert update.cost == 0.045 and update.total_cost == 0.045  # 10k*3 + 1k*15 per million
    done = events[-1]
    assert isinstance(done, Done) and done.cost == 0.045


async def test_a_budget_stops_new_calls_with_a_clear_message(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path / "usage.jsonl")
    budget = LedgerBudget(ledger, conversation="c1", per_conversation=0.05)
    provider = ScriptedProvider(priced_step("first", 10_000, 1_000), priced_step("second", 10_000, 1_000))
    session = InMemorySession(session_id="c1")
    first = await agent(provider, tmp_path).run_to_end("one", session=session, budget=budget)
    assert first.done is not None
    second = await agent(provider, tmp_path).run_to_end("two", session=session, budget=budget)
    assert second.done is not None  # $0.045 spent: still under $0.05
    third = await agent(provider, tmp_path).run_to_end("three", session=session, budget=budget)
    assert isinstance(third.error, Error) and third.error.kind == "budget"
    assert "conversation's budget of $0.05 is reached ($0.09 spent)" in third.error.message
    assert len(provider.requests) == 2  # the third call was never made
    day = LedgerBudget(UsageLedger(tmp_path / "usage.jsonl"), conversation="other", per_day=0.08)
    assert day.blocked() is not None and "daily budget of $0.08" in day.blocked()  # type: ignore[operator]
    records = [json.loads(line) for line in (tmp_path / "usage.jsonl").read_text().splitlines()]
    assert [r["cost"] for r in records] == [0.045, 0.045] and records[0]["model"] == "claude-sonnet-4-5"


async def stopped_mid_answer(
    provider: ScriptedProvider, gate: Gate, tmp_path: Path
) -> tuple[list[object], UsageLedger]:
    """A run stopped while its answer streams (the person's Stop), counted in a ledger."""
    ledger = UsageLedger(tmp_path / "usage.jsonl")
    signal = AbortSignal()

    async def stop_when_reached() -> None:
        await gate.reached.wait()
        signal.abort("stopped by the user")

    stopper = asyncio.create_task(stop_when_reached())
    budget = LedgerBudget(ledger, conversation="c1")
    session = InMemorySession(session_id="c1")
    events = [e async for e in agent(provider, tmp_path).run("go", session=session, signal=signal, budget=budget)]
    await stopper
    kept = session.messages()[-1]
    assert isinstance(kept, AssistantMessage) and kept.partial
    return [*events, kept], ledger


async def test_a_stopped_answer_counts_what_the_provider_had_counted(tmp_path: Path) -> None:
    from orkas.engine.providers.base import TextDeltaChunk, UsageChunk

    gate = Gate()
    counted = Usage(input_tokens=20_000, output_tokens=1)
    provider = ScriptedProvider([UsageChunk(usage=counted), TextDeltaChunk(text="Let me"), gate])
    [*events, kept], ledger = await stopped_mid_answer(provider, gate, tmp_path)
    [update] = [e for e in events if isinstance(e, UsageUpdate)]
    assert update.partial and update.usage == counted and update.cost == pytest.approx(0.060015)
    error = events[-1]
    assert isinstance(error, Error) and error.aborted and error.usage == counted
    assert isinstance(kept, AssistantMessage) and kept.usage == counted  # a reload shows the same
    totals = ledger.conversation("c1")
    assert (totals.calls, totals.partial_calls, totals.input_tokens) == (1, 1, 20_000)
    assert totals.cost == pytest.approx(0.060015)


async def test_a_stopped_answer_the_provider_had_not_counted_is_said_as_not_counted(tmp_path: Path) -> None:
    from orkas.engine.providers.base import TextDeltaChunk

    gate = Gate()
    provider = ScriptedProvider([TextDeltaChunk(text="Let me"), gate])  # it counts only at the end
    [*events, kept], ledger = await stopped_mid_answer(provider, gate, tmp_path)
    [update] = [e for e in events if isinstance(e, UsageUpdate)]
    assert update.partial and not update.usage.counted
    assert isinstance(kept, AssistantMessage) and not kept.usage.counted
    assert ledger.conversation("c1").calls == 0  # nothing known to count: no $0 record read as free


async def test_unknown_prices_stay_unknown(tmp_path: Path) -> None:
    provider = ScriptedProvider(text("hi"))
    events = [
        e
        async for e in Agent(
            providers=ProviderRegistry({"scripted": provider}),
            config=RunConfig(model="scripted/mystery-model"),
            workspace=tmp_path,
        ).run("hi", session=InMemorySession())
    ]
    assert isinstance(events[-1], Done) and events[-1].cost is None


def test_usage_and_budget_commands(anthropic_server: FakeServer) -> None:
    env = subprocess_env(ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=anthropic_server.url)
    anthropic_server.script(a_wire.reply_text("priced", input_tokens=2000, output_tokens=100))
    run = subprocess.run(
        [ORKAS, "run", "hi", "--model", "anthropic/claude-sonnet-4-5"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    usage = subprocess.run([ORKAS, "usage"], env=env, capture_output=True, text=True)
    assert "1 calls, 2000 in / 100 out tokens" in usage.stdout and "$0.0075" in usage.stdout
    budget = subprocess.run([ORKAS, "budget", "--day", "0.001"], env=env, capture_output=True, text=True)
    assert "per day: $0.00" in budget.stdout or "per day: $0.001" in budget.stdout
    blocked = subprocess.run(
        [ORKAS, "run", "again", "--model", "anthropic/claude-sonnet-4-5"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert blocked.returncode == 1 and "daily budget" in blocked.stderr
    assert len(anthropic_server.requests) == 1


def test_amounts_below_a_cent_are_said_in_full_not_as_nothing() -> None:
    from orkas.adapter.settings.usage import dollars

    assert [dollars(a) for a in (0.0005, 1e-7, 0.0045)] == ["$0.0005", "$0.0000001", "$0.0045"]
    assert [dollars(a) for a in (0, 0.01, 12.5, 1234.5)] == ["$0.00", "$0.01", "$12.50", "$1,234.50"]


def test_a_monthly_limit_counts_this_calendar_month_only(tmp_path: Path) -> None:
    import time

    now = time.mktime((2026, 3, 2, 12, 0, 0, 0, 0, -1))
    ledger = UsageLedger(tmp_path / "usage.jsonl", clock=lambda: now)
    lines = [
        {"day": "2026-02-28", "conversation": "a", "cost": 5.0},  # last month: not counted
        {"day": "2026-03-01", "conversation": "a", "cost": 1.5},
        {"day": "2026-03-02", "conversation": "b", "cost": 0.5},
    ]
    (tmp_path / "usage.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert ledger.month_cost() == 2.0 and ledger.month_cost("2026-02") == 5.0
    assert LedgerBudget(ledger, conversation="c", per_month=2.5).blocked() is None
    blocked = LedgerBudget(ledger, conversation="c", per_month=2.0).blocked()
    assert blocked is not None and "monthly budget of $2.00 is reached ($2.00 spent this month)" in blocked
    assert "orkas budget --month" in blocked
    # What Settings → Usage says as a limit is saved: each limit already spent up to, with what was spent.
    reached = LedgerBudget(ledger, conversation="b", per_day=0.5, per_month=3.0, per_conversation=0.4).reached()
    assert reached == {"per_day": 0.5, "per_conversation": 0.5}


async def test_a_cut_answer_counts_what_the_provider_had_counted(tmp_path: Path) -> None:
    from orkas.core.errors import ProviderError
    from orkas.engine.providers.base import TextDeltaChunk, UsageChunk

    counted = Usage(input_tokens=20_000, output_tokens=1)
    cut = ProviderError("connection reset", kind="network")
    provider = ScriptedProvider([UsageChunk(usage=counted), TextDeltaChunk(text="Let me"), cut])
    ledger = UsageLedger(tmp_path / "usage.jsonl")
    budget = LedgerBudget(ledger, conversation="c1")
    events = [e async for e in agent(provider, tmp_path).run("go", session=InMemorySession(), budget=budget)]
    [update] = [e for e in events if isinstance(e, UsageUpdate)]
    assert update.partial and update.usage == counted
    assert isinstance(events[-1], Error) and "cut off" in events[-1].message
    assert ledger.conversation("c1").partial_calls == 1


async def test_an_attempt_the_provider_counted_then_retried_is_counted_too(tmp_path: Path) -> None:
    # Overloaded after the provider had counted the input (its message_start), before any content: the call is tried
    # again, and the first attempt's input was paid for all the same.
    from orkas.core.errors import ProviderError
    from orkas.engine.providers.base import UsageChunk
    from tests.engine.helpers import FAST_RETRY

    counted = Usage(input_tokens=20_000, output_tokens=1)
    overloaded = ProviderError("Overloaded", kind="overloaded")
    provider = ScriptedProvider([UsageChunk(usage=counted), overloaded], priced_step("Fine.", 20_000, 10))
    ledger = UsageLedger(tmp_path / "usage.jsonl")
    budget = LedgerBudget(ledger, conversation="c1")
    runner = Agent(
        providers=ProviderRegistry({"scripted": provider}),
        config=RunConfig(model="scripted/claude-sonnet-4-5", retry=FAST_RETRY),
        workspace=tmp_path,
    )
    events = [e async for e in runner.run("go", session=InMemorySession(), budget=budget)]
    assert isinstance(events[-1], Done) and events[-1].text == "Fine."
    first, second = [e for e in events if isinstance(e, UsageUpdate)]
    assert first.partial and first.usage == counted and not second.partial
    totals = ledger.conversation("c1")
    assert (totals.calls, totals.input_tokens, totals.partial_calls) == (2, 40_000, 1)
    assert events[-1].usage.input_tokens == 40_000  # the run's own total says it too
    assert totals.cost == pytest.approx(events[-1].cost)

"""Weeks of use, scripted, with an injected clock: reflection through the real run loop and tools against a
scripted model; what triggers it and what never does; the schedule's cooldown, forced reflection and cap;
undo; one agent's failure leaving the others alone."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from orkas.adapter.evolution import COOLDOWN, FORCED, Evolution, agent_reflect
from orkas.adapter.signals import SignalLog
from orkas.engine.evolution import bundle
from orkas.engine.evolution.signals import RunSignals, ToolError
from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage
from orkas.engine.providers.registry import ProviderRegistry
from tests.fakes.scripted import ScriptedProvider, text, tool_call

DAY = 86_400.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def setup(tmp_path: Path, provider: ScriptedProvider, agents: Sequence[str] = ()) -> tuple[Evolution, SignalLog, Clock]:
    clock = Clock()
    log = SignalLog(tmp_path / "signals", clock=clock)

    def transcripts(agent: str, ids: Sequence[str]) -> list[bundle.Conversation]:
        return [
            bundle.Conversation(
                ident,
                "totals",
                [
                    UserMessage(content=(TextBlock(text="不对，应该按月汇总"),), created_at=clock.now - 60),
                    AssistantMessage(
                        content=(TextBlock(text="好的，按月汇总。"),),
                        provider="p",
                        model="m",
                        created_at=clock.now - 50,
                    ),
                ],
            )
            for ident in ids
        ]

    reflect = agent_reflect(lambda: ProviderRegistry({"scripted": provider}), lambda agent: "scripted/m", tmp_path)
    return Evolution(tmp_path / "data", log, transcripts, reflect, lambda: agents, clock=clock), log, clock


def run(agent: str, at: float, **fields: object) -> RunSignals:
    return RunSignals(agent=agent, conversation=f"c-{agent}", at=at, **fields)  # type: ignore[arg-type]


async def test_only_transient_errors_make_no_call_and_no_skill(tmp_path: Path) -> None:
    provider = ScriptedProvider()  # any call would fail the test: nothing is scripted
    evolution, log, clock = setup(tmp_path, provider)
    for _day in range(7):
        clock.now += DAY
        log.record(
            run("commander", clock.now, tool_calls=3, errors=[ToolError("web_fetch", True, "timed out")], retries=3)
        )
        log.record(run("commander", clock.now, outcome="transient", retries=5))
        outcomes = await evolution.cycle()
        assert not outcomes[0].reflected and "trigger 0.00" in outcomes[0].why
    assert provider.requests == [] and evolution.skills("commander").names() == []


async def test_a_chinese_correction_teaches_a_rule_the_next_prompt_carries(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        tool_call("memo_write", {"part": "strategies", "text": "- WHEN 汇总数据 THEN 按月汇总。"}, id="m1"),
        tool_call(
            "skill_manage",
            {
                "action": "create",
                "name": "monthly-totals",
                "description": "Use WHEN totals are asked for.",
                "content": "1. 按月分组。",
            },
            id="s1",
        ),
        text("已保存。"),
    )
    evolution, log, clock = setup(tmp_path, provider)
    log.record(run("commander", clock.now - 10, correction=("zh", "不对")))
    [outcome] = await evolution.cycle()
    assert (
        outcome.reflected
        and "user_correction" in outcome.why
        and outcome.changes
        == [
            "memo strategies",
            "create skill monthly-totals",
        ]
    )
    request = provider.requests[0]
    assert "按月汇总" in str(request.messages[0]) and "Transient errors" in request.system
    memo_section = evolution.memo("commander").prompt_section() or ""
    assert "WHEN 汇总数据 THEN 按月汇总" in memo_section
    assert evolution.skills("commander").meta("monthly-totals")["patchCount"] == 0
    history = evolution.history("commander")
    assert [h["kind"] for h in history] == ["memo", "skill"] and history[0]["conversations"] == ["c-commander"]
    evolution.undo("commander", history[1]["id"])  # one click: the skill goes, the memo stays
    assert evolution.skills("commander").names() == [] and "按月" in evolution.memo("commander").read("strategies")
    evolution.undo("commander", history[0]["id"])
    assert evolution.memo("commander").read("strategies") == ""


async def test_nothing_to_save_writes_nothing_and_the_dirty_check_skips_an_idle_agent(tmp_path: Path) -> None:
    provider = ScriptedProvider(text("nothing to save"))
    evolution, log, clock = setup(tmp_path, provider)
    log.record(run("commander", clock.now - 10, correction=("pt", "está errado")))
    [outcome] = await evolution.cycle()
    assert outcome.reflected and outcome.changes == [] and evolution.history("commander") == []
    clock.now += DAY
    [idle] = await evolution.cycle()
    assert not idle.reflected and idle.why == "nothing new since its last reflection" and len(provider.requests) == 1


async def test_cooldown_forced_reflection_and_the_cap_of_five_stalest_first(tmp_path: Path) -> None:
    agents = [f"a{n}" for n in range(7)]
    provider = ScriptedProvider(*[text("nothing to save") for _ in range(30)])
    evolution, log, clock = setup(tmp_path, provider, agents)
    for name in ["commander", *agents]:
        log.record(run(name, clock.now - 5, correction=("en", "wrong")))
    first = await evolution.cycle()
    assert sum(o.reflected for o in first) == 5 and sum("deferred" in o.why for o in first) == 3
    clock.now += 60
    for name in ["commander", *agents]:
        log.record(run(name, clock.now - 5, correction=("en", "wrong")))
    second = {o.agent: o for o in await evolution.cycle()}
    reflected_before = {o.agent for o in first if o.reflected}
    assert all(second[a].why == "reflected less than 4 h ago" for a in reflected_before)
    assert sum(o.reflected for o in second.values()) == 3  # the three deferred ones, stalest first
    manual = await evolution.cycle(agent="a0", scheduled=False)  # `orkas evolve run`: no cooldown, trigger kept
    assert manual[0].reflected
    clock.now += COOLDOWN + 60
    log.record(run("a0", clock.now - 5, tool_calls=2))  # new, quiet activity: below the trigger
    quiet = await evolution.cycle(agent="a0")
    assert not quiet[0].reflected and quiet[0].why.startswith("trigger 0.00")
    clock.now += FORCED
    log.record(run("a0", clock.now - 5, tool_calls=2))
    forced = await evolution.cycle(agent="a0")
    assert forced[0].reflected and "7 days" in forced[0].why


async def test_a_failing_reflection_leaves_its_timestamp_and_the_others_alone(tmp_path: Path) -> None:
    provider = ScriptedProvider(text("nothing to save"))
    evolution, log, clock = setup(tmp_path, provider, ["good"])

    async def reflect(agent: str, system: str, user: str, tools: Sequence[object]) -> tuple[str, int]:
        if agent == "commander":
            raise RuntimeError("provider down")
        return "nothing to save", 10

    evolution.reflect = reflect  # type: ignore[assignment]
    for name in ("commander", "good"):
        log.record(run(name, clock.now - 5, correction=("en", "wrong")))
    outcomes = {o.agent: o for o in await evolution.cycle()}
    assert outcomes["commander"].error == "provider down" and not outcomes["commander"].reflected
    assert outcomes["good"].reflected and evolution.last("good") is not None and evolution.last("commander") is None
    status = {row["agent"]: row for row in evolution.status()}
    assert status["commander"]["dirty"] and status["commander"]["trigger"]["fires"] and not status["good"]["dirty"]


@pytest.mark.parametrize("agent", ["commander"])
async def test_status_lists_learned_skills_with_their_metrics(tmp_path: Path, agent: str) -> None:
    evolution, log, clock = setup(tmp_path, ScriptedProvider())
    evolution.skills(agent).create("tidy", "Use to tidy.", "Do it.")
    for _ in range(6):
        log.record(run(agent, clock.now - 100, skills_advertised=["tidy"], skills_read=["tidy"]))
    [row] = evolution.status()
    assert row["learned_skills"][0]["name"] == "tidy" and row["learned_skills"][0]["health"] == "healthy"


async def test_the_threshold_is_the_persons(tmp_path: Path) -> None:
    evolution, log, clock = setup(tmp_path, ScriptedProvider())
    level = [1.5]
    evolution._threshold = lambda: level[0]
    log.record(run("commander", clock.now - 5, correction=("en", "wrong")))
    [quiet] = await evolution.cycle()
    assert not quiet.reflected and "below 1.5" in quiet.why  # a correction alone is 0.9

"""Where a run fires hooks and what their outcome does, with the real run loop and a scripted provider: a refused call
is never executed, a refused prompt never reaches the model (nor does a message sent while the run was busy), a Stop
hook keeps the agent going at most MAX_CONTINUES times, and an approval a hook needs is asked first."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orkas.engine.consent import Ask, Permissions
from orkas.engine.events import Done, Error, PermissionRequest, RunWarning
from orkas.engine.hooks import MAX_CONTINUES, Event, Outcome
from orkas.engine.messages import TextBlock, UserMessage
from orkas.engine.session import InMemorySession
from orkas.engine.steer import SteerQueue
from tests.engine.helpers import collect, make_agent
from tests.engine.tools_for_tests import Echo, Slow
from tests.fakes.scripted import ScriptedProvider, text, tool_call


@dataclass
class Rules:
    """Hooks as the engine sees them: an outcome per event (and a question before the first run, when `asks`)."""

    outcomes: dict[str, Outcome]
    asks: bool = False
    seen: list[tuple[str, dict[str, Any], frozenset[str]]] = field(default_factory=list)

    def wants(self, event: Event, tool: str | None = None) -> bool:
        return event in self.outcomes

    def approvals(self, event: Event, tool: str | None = None) -> list[Ask]:
        return (
            [Ask(tool="hook", level="runs_program", categories=("hook",), preview="x", key="hook:1")]
            if self.asks
            else []
        )

    async def run(self, event: Event, payload: Mapping[str, Any], approved: frozenset[str]) -> Outcome:
        self.seen.append((event, dict(payload), approved))
        return self.outcomes[event] if (not self.asks or approved) else Outcome()


def agent(provider: ScriptedProvider, workspace: Path, rules: Rules, tools: list[Any] | None = None) -> Any:
    made = make_agent(provider, workspace, tools=tools or [Echo()])
    made.hooks = rules
    return made


async def test_a_refused_call_never_runs_and_the_model_reads_why(tmp_path: Path) -> None:
    echo = Echo()
    rules = Rules({"PreToolUse": Outcome(block="not today"), "PostToolUse": Outcome(context="never seen")})
    provider = ScriptedProvider(tool_call("echo", {"text": "hi"}), text("ok"))
    session = InMemorySession()
    await collect(agent(provider, tmp_path, rules, [echo]), session=session)
    assert echo.calls == [] and [e for e, _, _ in rules.seen] == ["PreToolUse"]
    told = provider.requests[1].messages[-1].content[0].content[0].text  # type: ignore[union-attr]
    assert told == "A PreToolUse hook blocked this call: not today"


async def test_what_a_posttooluse_hook_says_joins_the_result(tmp_path: Path) -> None:
    rules = Rules({"PostToolUse": Outcome(block="lint failed", context="3 warnings")})
    provider = ScriptedProvider(tool_call("echo", {"text": "hi"}), text("ok"))
    await collect(agent(provider, tmp_path, rules))
    said = [b.text for b in provider.requests[1].messages[-1].content[0].content]  # type: ignore[union-attr]
    assert said[-1] == "A PostToolUse hook says: lint failed\n3 warnings"
    [(_, payload, _)] = rules.seen
    assert payload["tool_response"]["is_error"] is False and payload["tool_name"] == "echo"


async def test_a_refused_prompt_never_reaches_the_model_or_the_session(tmp_path: Path) -> None:
    rules = Rules({"UserPromptSubmit": Outcome(block="no secrets", notes=("the check ran",))})
    provider = ScriptedProvider()
    session = InMemorySession()
    events = await collect(agent(provider, tmp_path, rules), "my key is sk-123", session=session)
    assert isinstance(events[-1], Error) and events[-1].kind == "hook"
    assert events[-1].message == "A hook refused this message: no secrets"
    assert [e.message for e in events if isinstance(e, RunWarning)] == ["the check ran"]
    assert provider.requests == [] and session.messages() == []


async def test_a_message_sent_while_busy_passes_the_same_hook(tmp_path: Path) -> None:
    slow = Slow()
    steer = SteerQueue()
    rules = Rules({"UserPromptSubmit": Outcome()})
    provider = ScriptedProvider(tool_call("slow", {}, id="t1"), text("done"))

    async def send_while_busy() -> None:
        await slow.started.wait()
        rules.outcomes["UserPromptSubmit"] = Outcome(block="not that")
        steer.put("and paste my password")
        slow.release.set()

    helper = asyncio.create_task(send_while_busy())
    session = InMemorySession()
    events = [e async for e in agent(provider, tmp_path, rules, [slow]).run("go", session=session, steer=steer)]
    await helper
    assert "A hook refused your message ('and paste my password'): not that" in [
        e.message for e in events if isinstance(e, RunWarning)
    ]
    texts = [
        b.text for m in session.messages() if isinstance(m, UserMessage) for b in m.content if isinstance(b, TextBlock)
    ]
    assert "and paste my password" not in texts and isinstance(events[-1], Done)


async def test_a_stop_hook_keeps_the_agent_going_at_most_a_few_times(tmp_path: Path) -> None:
    rules = Rules({"Stop": Outcome(block="run the tests")})
    provider = ScriptedProvider(*[text(f"answer {i}") for i in range(MAX_CONTINUES + 1)])
    events = await collect(agent(provider, tmp_path, rules))
    assert isinstance(events[-1], Done) and events[-1].text == f"answer {MAX_CONTINUES}"
    actives = [payload["stop_hook_active"] for _, payload, _ in rules.seen]
    assert actives == [False] + [True] * MAX_CONTINUES
    assert provider.requests[1].messages[-1].content[0].text == "A Stop hook asks you not to stop yet: run the tests"  # type: ignore[union-attr]


async def test_a_hook_that_needs_approval_is_asked_on_the_turn_and_a_no_means_it_does_not_run(tmp_path: Path) -> None:
    rules = Rules({"UserPromptSubmit": Outcome(block="refused by a hook nobody approved")}, asks=True)
    provider = ScriptedProvider(text("hello"))
    permissions = Permissions(workspace=tmp_path, can_ask=True)
    run = agent(provider, tmp_path, rules).run("hi", session=InMemorySession(), permissions=permissions)
    events = []
    async for event in run:
        events.append(event)
        if isinstance(event, PermissionRequest):
            assert event.tool_use_id == "" and event.tool == "hook"
            permissions.answer(event.id, "deny")
    assert isinstance(events[-1], Done)  # not approved: not run, the prompt goes through
    assert rules.seen == [("UserPromptSubmit", {"prompt": "hi"}, frozenset())]

"""Building agents around a ScriptedProvider for engine tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orkas.engine.abort import AbortSignal
from orkas.engine.events import Done, Error, Event
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.retry import RetryPolicy
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.session import InMemorySession, Session
from orkas.engine.tools.base import Tool
from tests.fakes.scripted import ScriptedProvider

FAST_RETRY = RetryPolicy(max_retries=3, base_delay=0.001, max_delay=0.01)


def make_agent(provider: ScriptedProvider, workspace: Path, *, tools: list[Tool] | None = None, **config: Any) -> Agent:
    config.setdefault("retry", FAST_RETRY)
    return Agent(
        providers=ProviderRegistry({provider.name: provider}),
        config=RunConfig(model=f"{provider.name}/scripted-model", **config),
        workspace=workspace,
        tools=tools or [],
    )


async def collect(
    agent: Agent, prompt: str = "hello", *, session: Session | None = None, signal: AbortSignal | None = None
) -> list[Event]:
    events = [e async for e in agent.run(prompt, session=session or InMemorySession(), signal=signal)]
    terminal = [e for e in events if isinstance(e, Done | Error)]
    assert len(terminal) == 1 and events[-1] is terminal[0], f"a run ends with exactly one done/error: {events}"
    return events


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]

"""A reflection call: the engine's run loop with the reflection's two tools only, a low output cap, nothing saved
as a session, on the model `model_of(agent)` names (Settings → Learning: by default the provider's small one)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from orkas.adapter.learning.evolution import OUTPUT_TOKENS, Reflect
from orkas.engine.tools.base import Tool


def agent_reflect(providers: Callable[[], Any], model_of: Callable[[str], str], workspace: Path) -> Reflect:
    """Reflection through the engine's run loop: the agent's own model, only the two reflection tools, a low
    output cap, nothing saved as a session. `providers` builds a registry (closed after the call)."""
    from orkas.engine.events import Done, Error
    from orkas.engine.prompt import SystemPrompt
    from orkas.engine.retry import RetryPolicy
    from orkas.engine.runner import Agent, RunConfig
    from orkas.engine.session import InMemorySession

    async def reflect(agent: str, system: str, user: str, tools: Sequence[Tool]) -> tuple[str, int]:
        registry = providers()
        try:
            runner = Agent(
                providers=registry,
                config=RunConfig(
                    model=model_of(agent), max_tool_loops=8, max_tokens=OUTPUT_TOKENS, retry=RetryPolicy(max_retries=2)
                ),
                workspace=workspace,
                tools=tools,
                system_prompt=SystemPrompt(base=system),
            )
            answer, tokens = "", 0
            async for event in runner.run(user, session=InMemorySession()):
                if isinstance(event, Done):
                    answer, tokens = event.text, event.usage.input_tokens + event.usage.output_tokens
                elif isinstance(event, Error):
                    raise RuntimeError(f"the reflection call failed: {event.message}")
            return answer, tokens
        finally:
            await registry.aclose()

    return reflect

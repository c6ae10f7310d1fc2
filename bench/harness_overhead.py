"""What the harness costs on top of the model SDK, measured against a zero-latency fake server.

Side by side, interleaved so drift hits all alike:
  (a) a direct `anthropic` SDK streaming call (and, for the tool task, a minimal hand-written loop),
  (b) the same turn through Orkas `Agent.run()`,
  (c) pydantic-ai driving the same fake server through the same SDK (if installed: setup.sh --bench).

Prints p50/p95 per turn, the overhead of (b) over (a), the per-tool-round-trip overhead over a
20-round task (tool time excluded), and the ratio of our overhead to the peer's.

    .venv/bin/python -m bench.harness_overhead [--turns 300] [--tasks 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import anthropic
import httpx2

from orkas.engine.messages import user_text
from orkas.engine.providers.anthropic import AnthropicProvider
from orkas.engine.providers.anthropic.request import build_params
from orkas.engine.providers.base import ProviderRequest, ProviderSpec
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.session import InMemorySession
from orkas.engine.tools.base import ToolContext, ToolResult, text_result
from orkas.engine.tools.files import ListFiles, ReadFile

MODEL = "claude-bench"
ROUNDS = 20
TASK_PROMPT = f"ROUNDS={ROUNDS} call the noop tool until told to stop"


class Noop:
    name = "noop"
    description = "Does nothing, instantly."
    read_only = True
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"i": {"type": "integer"}},
        "required": ["i"],
    }

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return text_result(f"noop {input['i']}")


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.fake_model_server"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    assert proc.stdout is not None
    return proc, json.loads(proc.stdout.readline())["url"]


def sdk_client(url: str) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key="bench", base_url=url, max_retries=0, timeout=httpx2.Timeout(60.0, connect=10.0)
    )


# --- (a) the SDK alone ------------------------------------------------------------------------------


async def direct_turn(client: anthropic.AsyncAnthropic, params: dict[str, Any]) -> float:
    started = time.perf_counter()
    stream = await client.messages.create(**params, stream=True)
    async with stream:
        async for _event in stream:
            pass
    return time.perf_counter() - started


async def direct_task(client: anthropic.AsyncAnthropic, params: dict[str, Any]) -> float:
    """The least a hand-written tool loop must do: stream, assemble tool calls, answer, ask again."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": TASK_PROMPT}]}]
    started = time.perf_counter()
    while True:
        blocks: list[dict[str, Any]] = []
        parts: list[str] = []
        stream = await client.messages.create(**{**params, "messages": messages}, stream=True)
        async with stream:
            async for event in stream:
                if event.type == "content_block_start":
                    blocks.append(event.content_block.model_dump())
                    parts = []
                elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                    parts.append(event.delta.partial_json)
                elif event.type == "content_block_stop" and blocks[-1]["type"] == "tool_use":
                    blocks[-1]["input"] = json.loads("".join(parts) or "{}")
        calls = [b for b in blocks if b["type"] == "tool_use"]
        if not calls:
            return time.perf_counter() - started
        messages.append({"role": "assistant", "content": blocks})
        results = [{"type": "tool_result", "tool_use_id": c["id"], "content": f"noop {c['input']['i']}"} for c in calls]
        messages.append({"role": "user", "content": results})


# --- (b) Orkas ------------------------------------------------------------------------------------------


def orkas_agent(url: str, workspace: Path) -> Agent:
    provider = AnthropicProvider(ProviderSpec(name="anthropic", api="anthropic-messages", base_url=url, api_key="b"))
    return Agent(
        providers=ProviderRegistry({"anthropic": provider}),
        config=RunConfig(model=f"anthropic/{MODEL}"),
        workspace=workspace,
        tools=[ReadFile(), ListFiles(), Noop()],
    )


async def orkas_turn(agent: Agent, prompt: str) -> float:
    started = time.perf_counter()
    result = await agent.run_to_end(prompt, session=InMemorySession())
    elapsed = time.perf_counter() - started
    assert result.done is not None, result.error
    return elapsed - result.done.timings.tools


# --- (c) the peer framework --------------------------------------------------------------------------------


def peer_agent(url: str) -> Any | None:
    try:
        from pydantic_ai import Agent as PeerAgent
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider as PeerProvider
    except ImportError:
        return None

    agent = PeerAgent(
        AnthropicModel(MODEL, provider=PeerProvider(anthropic_client=sdk_client(url))),
        system_prompt="You are a benchmark agent.",
    )

    @agent.tool_plain
    def noop(i: int) -> str:
        """Does nothing, instantly."""
        return f"noop {i}"

    return agent


async def peer_turn(agent: Any, prompt: str) -> float:
    started = time.perf_counter()
    async with agent.run_stream_events(prompt) as events:
        async for _event in events:
            pass
    return time.perf_counter() - started


# --- measurement -----------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def interleaved(
    runners: dict[str, Callable[[], Awaitable[float]]], count: int, warmup: int
) -> dict[str, list[float]]:
    for _ in range(warmup):
        for run in runners.values():
            await run()
    samples: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(count):
        for name, run in runners.items():
            samples[name].append(await run())
    return samples


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f}"


async def main_async(turns: int, tasks: int) -> None:
    proc, url = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            agent = orkas_agent(url, Path(tmp))
            client = sdk_client(url)
            request = ProviderRequest(
                model=MODEL,
                messages=[user_text("hello")],
                system=agent.system_prompt.build(agent.tools.definitions, agent.workspace),
                tools=agent.tools.definitions,
            )
            params = build_params(request)  # (a) sends exactly what (b) sends
            peer = peer_agent(url)

            turn_runners: dict[str, Callable[[], Awaitable[float]]] = {
                "a_sdk": lambda: direct_turn(client, params),
                "b_orkas": lambda: orkas_turn(agent, "hello"),
            }
            task_runners: dict[str, Callable[[], Awaitable[float]]] = {
                "a_sdk": lambda: direct_task(client, params),
                "b_orkas": lambda: orkas_turn(agent, TASK_PROMPT),
            }
            if peer is not None:
                turn_runners["c_peer"] = lambda: peer_turn(peer, "hello")
                task_runners["c_peer"] = lambda: peer_turn(peer, TASK_PROMPT)

            turn = await interleaved(turn_runners, turns, warmup=20)
            task = await interleaved(task_runners, tasks, warmup=2)
            report(turn, task, turns, tasks, peer is not None)
            await client.close()
            await agent.providers.aclose()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def report(turn: dict[str, list[float]], task: dict[str, list[float]], turns: int, tasks: int, peer: bool) -> None:
    print(
        f"# harness overhead — {time.strftime('%Y-%m-%d')} — {platform.node()} ({platform.machine()}, "
        f"Python {platform.python_version()}, anthropic {anthropic.__version__})"
    )
    print(f"\nPer turn ({turns} interleaved turns each, zero-latency fake server), ms:")
    print(f"{'':10}{'p50':>8} {'p95':>8}")
    for name, values in turn.items():
        print(f"{name:10}{ms(pct(values, 0.5))} {ms(pct(values, 0.95))}")
    over50 = pct(turn["b_orkas"], 0.5) - pct(turn["a_sdk"], 0.5)
    over95 = pct(turn["b_orkas"], 0.95) - pct(turn["a_sdk"], 0.95)
    print(f"overhead (b)-(a): p50 {ms(over50)} ms   p95 {ms(over95)} ms   (goal: p50 <= 5 ms)")

    per_round: dict[str, float] = {}
    print(f"\n{ROUNDS}-round tool task ({tasks} tasks each, tool time excluded), ms per task:")
    for name, values in task.items():
        per_round[name] = statistics.median(values) / (ROUNDS + 1)
        print(f"{name:10}{ms(statistics.median(values))}  ({ms(per_round[name])} per model round trip)")
    round_over = (statistics.median(task["b_orkas"]) - statistics.median(task["a_sdk"])) / ROUNDS
    print(f"overhead (b)-(a) per tool round trip: {ms(round_over)} ms   (goal: <= 10 ms)")
    if peer:
        peer_turn_over = pct(turn["c_peer"], 0.5) - pct(turn["a_sdk"], 0.5)
        peer_round_over = (statistics.median(task["c_peer"]) - statistics.median(task["a_sdk"])) / ROUNDS
        print(
            f"\npeer (c) overhead over (a): per turn p50 {ms(peer_turn_over)} ms, per tool round trip "
            f"{ms(peer_round_over)} ms"
        )
        print(
            f"ratio ours/peer: per turn {over50 / peer_turn_over:.2f}, per tool round trip "
            f"{round_over / peer_round_over:.2f}  (below 1.00 means we add less)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--tasks", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main_async(args.turns, args.tasks))


if __name__ == "__main__":
    main()

"""The group's dispatch: four agents whose model takes 1 s each, dispatched in one commander response.

    .venv/bin/python -m bench.group_dispatch [--latency 1.0] [--agents 4] [--runs 5]

Side by side: the same turn with dispatches one at a time (the cap at 1 — what a serial design costs),
and the same turn with zero-latency models, where everything left is orchestration (the bus's fsynced
posts, each member's transcript, building each member's agent) — compared with a commander that makes
the same two model calls and runs four no-op tools instead of dispatching (the baseline for "overhead
per dispatch"). Real files in a temporary folder: the bus and the transcripts are fsynced as in the app.

Targets (issue 15): wall time ≤ 1.3 s for 4 × 1 s (serial: 4 s); overhead per dispatch ≤ 20 ms; after
Stop, every actor has ended within 1 s (measured with four agents mid-call on 30-second models).
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orkas.adapter.conversations.sessions import PersistentSession
from orkas.engine.abort import AbortSignal
from orkas.engine.messages import AssistantMessage, TextBlock, ToolUseBlock, Usage
from orkas.engine.prompt import SystemPrompt
from orkas.engine.providers.base import (
    Capabilities,
    MessageEnd,
    ProviderRequest,
    StreamChunk,
    TextDeltaChunk,
    ToolCallChunk,
)
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.tools.base import Tool, ToolContext, ToolResult, text_result
from orkas.team.agents import AgentSpec
from orkas.team.group import Group


class Model:
    """A model that takes `latency` seconds; the commander's first call asks for `calls`."""

    def __init__(self, latency: float, calls: Sequence[tuple[str, dict[str, Any]]] = (), on_call: Any = None) -> None:
        self.latency = latency
        self.calls = list(calls)
        self.count = 0
        self.on_call = on_call  # told when a call starts (the stop benchmark waits for all of them)

    @property
    def name(self) -> str:
        return "bench"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities()

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamChunk]:
        self.count += 1
        if self.on_call is not None:
            self.on_call()
        if self.latency:
            await asyncio.sleep(self.latency)
        usage = Usage(input_tokens=10, output_tokens=5)
        if self.calls and self.count == 1:
            blocks = [ToolUseBlock(id=f"call_{i}", name=name, input=args) for i, (name, args) in enumerate(self.calls)]
            for block in blocks:
                yield ToolCallChunk(id=block.id, name=block.name)
            message = AssistantMessage(content=tuple(blocks), provider="bench", model="m", stop_reason="tool_use")
            yield MessageEnd(message=message, stop_reason="tool_use", usage=usage)
            return
        yield TextDeltaChunk(text="ok")
        message = AssistantMessage(content=(TextBlock(text="ok"),), provider="bench", model="m", usage=usage)
        yield MessageEnd(message=message, stop_reason="end_turn", usage=usage)

    async def validate_auth(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


@dataclass
class NoOp:
    name: str = "noop"
    description: str = "does nothing"
    read_only: bool = True
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return text_result("done")


def agent(model: Model, workspace: Path, tools: Sequence[Tool], note: str) -> Agent:
    return Agent(
        providers=ProviderRegistry({"bench": model}),
        config=RunConfig(model="bench/m"),
        workspace=workspace,
        tools=list(tools),
        system_prompt=SystemPrompt(base=note or "bench"),
    )


async def group_turn(folder: Path, *, agents: int, latency: float, cap: int) -> float:
    names = [f"agent{i}" for i in range(agents)]
    specs = {n: AgentSpec(name=n, description="bench", prompt="bench") for n in names}
    calls = [("dispatch_to", {"to": n, "message": "go"}) for n in names]
    workspace = folder / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)

    def make(spec: AgentSpec | None, tools: Sequence[Tool], note: str, workspace_: Path | None = None) -> Agent:
        model = Model(0.0, calls) if spec is None else Model(latency)
        return agent(model, workspace, tools, note)

    group = Group(folder / "conversation", agents=specs, make_agent=make, dispatch_cap=cap)
    group.set_members(names)
    started = time.perf_counter()
    async for _ in group.send("go"):
        pass
    elapsed = time.perf_counter() - started
    group.close()
    return elapsed


async def stop_latency(folder: Path, *, agents: int) -> float:
    """Stop while every agent's model is mid-call (each would take 30 s): seconds until the turn has ended
    for every actor."""
    names = [f"agent{i}" for i in range(agents)]
    specs = {n: AgentSpec(name=n, description="bench", prompt="bench") for n in names}
    calls = [("dispatch_to", {"to": n, "message": "go"}) for n in names]
    workspace = folder / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    started = {"calls": 0}
    all_running = asyncio.Event()

    def one_more() -> None:
        started["calls"] += 1
        if started["calls"] == agents:
            all_running.set()

    def make(spec: AgentSpec | None, tools: Sequence[Tool], note: str, workspace_: Path | None = None) -> Agent:
        model = Model(0.0, calls) if spec is None else Model(30.0, on_call=one_more)
        return agent(model, workspace, tools, note)

    group = Group(folder / "conversation", agents=specs, make_agent=make)
    group.set_members(names)
    signal = AbortSignal()
    stopped_at = 0.0

    async def stop_when_all_run() -> None:
        nonlocal stopped_at
        await all_running.wait()
        await asyncio.sleep(0.05)  # each is now inside its model call
        stopped_at = time.perf_counter()
        signal.abort("stopped by the user")

    stopper = asyncio.create_task(stop_when_all_run())
    async for _ in group.send("go", signal=signal):
        pass
    ended = time.perf_counter()
    await stopper
    group.close()
    return ended - stopped_at


async def baseline_turn(folder: Path, *, agents: int) -> float:
    """The commander's same two calls with `agents` no-op tools: everything but the dispatching."""
    workspace = folder / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    model = Model(0.0, [("noop", {}) for _ in range(agents)])
    runner = agent(model, workspace, [NoOp()], "bench")
    session = PersistentSession(folder / "baseline.jsonl")
    started = time.perf_counter()
    async for _ in runner.run("go", session=session):
        pass
    elapsed = time.perf_counter() - started
    session.close()
    return elapsed


def median(values: list[float]) -> float:
    return statistics.median(values)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    parallel, serial, zero, base = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="orkas-group-bench-") as root:
        for run in range(args.runs):
            folder = Path(root) / str(run)
            parallel.append(await group_turn(folder / "p", agents=args.agents, latency=args.latency, cap=4))
            zero.append(await group_turn(folder / "z", agents=args.agents, latency=0.0, cap=4))
            base.append(await baseline_turn(folder / "b", agents=args.agents))
        serial.append(await group_turn(Path(root) / "serial", agents=args.agents, latency=args.latency, cap=1))
        stops = [await stop_latency(Path(root) / f"stop{run}", agents=args.agents) for run in range(args.runs)]
    overhead = (median(zero) - median(base)) / args.agents
    print(f"machine: {platform.machine()}, {platform.system()}; {args.agents} agents × {args.latency:.1f} s model")
    print(f"{'':34} {'wall':>9}")
    print(f"{'serial (cap 1), 1 run':34} {median(serial):8.3f}s")
    print(f"{'parallel (cap 4), median of ' + str(args.runs):34} {median(parallel):8.3f}s")
    print(f"{'ratio parallel/serial':34} {median(parallel) / median(serial):8.2f}×")
    print(f"{'zero-latency group turn':34} {median(zero) * 1000:7.1f}ms")
    print(f"{'zero-latency baseline (no-op tools)':34} {median(base) * 1000:7.1f}ms")
    print(f"{'orchestration overhead per dispatch':34} {overhead * 1000:7.1f}ms")
    print(f"{'stop → every actor ended (median)':34} {median(stops) * 1000:7.1f}ms")
    print("targets: wall ≤ 1.3 s; overhead per dispatch ≤ 20 ms; stop ≤ 1 s")


if __name__ == "__main__":
    asyncio.run(main())

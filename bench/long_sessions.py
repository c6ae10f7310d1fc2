"""Sessions that last: resume time, durable-append latency, and parallel read-only tools.

    .venv/bin/python -m bench.long_sessions [--megabytes 100] [--appends 2000]

1. Resume a large transcript: tail-first `load()` against a full parse with the standard library
   (the baseline), side by side.
2. Append latency, one fsynced record per write, p50/p99, against the same appends without fsync.
3. N read-only tools with a fixed latency through the run loop: parallel (cap 8) against serial.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fakes.scripted import ScriptedProvider, text, tool_calls

from orkas.adapter.conversations.sessions import SessionStore, load
from orkas.adapter.conversations.transcript import encode_line
from orkas.engine.codec import decode
from orkas.engine.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.repair import repair
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.session import InMemorySession
from orkas.engine.tools.base import ToolContext, ToolResult, text_result

WORDS = "the quick brown fox jumps over the lazy dog 数据 文件 análise".split()


def make_transcript(path: Path, megabytes: int) -> int:
    rng = random.Random(1)
    out = bytearray()
    turns = 0
    while len(out) < megabytes * 1024 * 1024:
        question = UserMessage(content=(TextBlock(text=" ".join(rng.choice(WORDS) for _ in range(30))),))
        call = AssistantMessage(
            content=(
                TextBlock(text="Let me look."),
                ToolUseBlock(id=f"t{turns}", name="read_file", input={"path": "f"}),
            ),
            provider="anthropic",
            model="claude-x",
        )
        output = "\n".join(" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(60))
        result = UserMessage(content=(ToolResultBlock(tool_use_id=f"t{turns}", content=(TextBlock(text=output),)),))
        answer = AssistantMessage(content=(TextBlock(text="Done."),), provider="anthropic", model="claude-x")
        for message in (question, call, result, answer):
            out += encode_line(message)
        turns += 1
    path.write_bytes(out)
    return turns * 4


def full_stdlib_load(path: Path) -> list[Message]:
    """The baseline: read everything, parse every line with the standard library, repair."""
    messages = [decode(json.loads(line)) for line in path.read_bytes().splitlines() if line.strip()]
    return repair(messages)[0]


def bench_resume(megabytes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        count = make_transcript(path, megabytes)
        size = path.stat().st_size / 1e6
        timings: dict[str, list[float]] = {"tail-first load()": [], "full stdlib parse (baseline)": []}
        for _ in range(3):
            started = time.perf_counter()
            session, report = load(path, write_back=False)
            timings["tail-first load()"].append(time.perf_counter() - started)
            started = time.perf_counter()
            full_stdlib_load(path)
            timings["full stdlib parse (baseline)"].append(time.perf_counter() - started)
        print(f"\n1. Resume a {size:.0f} MB transcript ({count} messages), best of 3:")
        for name, values in timings.items():
            print(f"   {name:32} {min(values) * 1000:8.0f} ms")
        ratio = min(timings["full stdlib parse (baseline)"]) / min(timings["tail-first load()"])
        print(
            f"   loaded {len(session.messages())} messages, {report.not_loaded_bytes / 1e6:.0f} MB left on disk; "
            f"{ratio:.1f}x faster than the baseline (goal: <= 1 s)"
        )


async def bench_appends(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp))
        message_text = "x" * 900
        results: dict[str, list[float]] = {}
        for mode in ("fsync (PersistentSession.append)", "no fsync (baseline)"):
            session = store.create()
            samples: list[float] = []
            for i in range(count):
                message: Message = (
                    UserMessage(content=(TextBlock(text=message_text),))
                    if i % 2 == 0
                    else AssistantMessage(content=(TextBlock(text=message_text),), provider="p", model="m")
                )
                started = time.perf_counter()
                if mode.startswith("fsync"):
                    await session.append(message)
                else:
                    with session.path.open("ab") as f:
                        f.write(encode_line(message))
                samples.append(time.perf_counter() - started)
            session.close()
            results[mode] = samples
        print(f"\n2. Append latency, {count} records of ~1 KB each:")
        for mode, samples in results.items():
            ordered = sorted(samples)
            p50 = ordered[len(ordered) // 2] * 1000
            p99 = ordered[int(len(ordered) * 0.99)] * 1000
            print(f"   {mode:34} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")


class Sleepy:
    name = "sleepy"
    description = "Waits, then answers."
    read_only = True
    input_schema: Mapping[str, Any] = {"type": "object"}

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(0.1)
        return text_result("done")


async def bench_parallel(n: int) -> None:
    print(f"\n3. {n} read-only tools of 100 ms each in one round:")
    measured: dict[int, float] = {}
    for cap in (8, 1):
        calls = [("sleepy", {"n": i}, f"c{i}") for i in range(n)]
        provider = ScriptedProvider(tool_calls(calls), text("ok"))
        agent = Agent(
            providers=ProviderRegistry({"scripted": provider}),
            config=RunConfig(model="scripted/m", max_parallel_tools=cap),
            workspace=Path.cwd(),
            tools=[Sleepy()],
        )
        result = await agent.run_to_end("go", session=InMemorySession())
        assert result.done is not None
        measured[cap] = result.done.timings.tools
        label = "parallel (cap 8)" if cap == 8 else "serial (baseline)"
        print(f"   {label:20} {measured[cap] * 1000:7.0f} ms")
    print(f"   speed-up {measured[1] / measured[8]:.1f}x; slowest single tool 100 ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--appends", type=int, default=2000)
    args = parser.parse_args()
    print(
        f"# long sessions — {time.strftime('%Y-%m-%d')} — {platform.node()} ({platform.machine()}, "
        f"Python {platform.python_version()})"
    )
    bench_resume(args.megabytes)
    asyncio.run(bench_appends(args.appends))
    asyncio.run(bench_parallel(8))


if __name__ == "__main__":
    main()

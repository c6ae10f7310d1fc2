"""Self-evolution's costs, measured: counting and recording one run's signals, a reflection cycle over 50 agents
with nothing new, and building the reflection bundle from 5 long conversations.

    .venv/bin/python -m bench.evolution [--runs 200]

Baselines side by side: recording through an fsynced append (what the product's durable logs use) instead of
a plain append; a cycle that reads every agent's conversations before deciding (instead of the dirty check on
the signals); the bundle without its token budget (every line of every conversation).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from orkas.adapter.learning.evolution import Evolution
from orkas.adapter.learning.signals import SignalLog
from orkas.core.fsutil import append_durably
from orkas.engine.events import Done, RunStart, TextDelta, ToolEnd, ToolStart, UsageUpdate
from orkas.engine.evolution import bundle
from orkas.engine.evolution.signals import Observer, RunSignals
from orkas.engine.messages import AssistantMessage, TextBlock, Usage, UserMessage


def run_events(tools: int = 30, deltas: int = 300) -> list[object]:
    events: list[object] = [RunStart(session_id="s", model="m")]
    for n in range(tools):
        events.append(ToolStart(id=f"t{n}", name="read_file", input={"path": f"f{n}.txt"}))
        text = "no such file" if n % 7 == 0 else "contents"
        events.append(
            ToolEnd(
                id=f"t{n}",
                name="read_file",
                content=(TextBlock(text=text),),
                details=None,
                is_error=n % 7 == 0,
                duration=0.01,
            )
        )
    events += [TextDelta(text="word ") for _ in range(deltas)]
    events.append(UsageUpdate(usage=Usage(), total=Usage()))
    events.append(Done(text="done", stop_reason="end_turn", usage=Usage(), tool_loops=tools))
    return events


def conversations(count: int = 5, turns: int = 300) -> list[bundle.Conversation]:
    chats = []
    for c in range(count):
        messages: list[object] = []
        for n in range(turns):
            at = 1_000_000 + c * 100_000 + n * 60
            messages.append(
                UserMessage(
                    content=(TextBlock(text=f"Please check item {n} again, it should be by month."),), created_at=at
                )
            )
            messages.append(
                AssistantMessage(
                    content=(TextBlock(text="A long answer. " * 120),), provider="p", model="m", created_at=at + 5
                )
            )
        chats.append(bundle.Conversation(f"c{c}", f"chat {c}", messages))  # type: ignore[arg-type]
    return chats


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    events = run_events()
    with tempfile.TemporaryDirectory() as folder:
        log = SignalLog(Path(folder) / "signals")
        ours, durable = [], []
        for n in range(args.runs):
            began = time.perf_counter()
            signals = Observer("commander", f"c{n}", "that's wrong, redo it").see_all(events)  # type: ignore[arg-type]
            log.record(signals)
            ours.append(time.perf_counter() - began)
            began = time.perf_counter()
            signals = Observer("commander", f"c{n}", "that's wrong, redo it").see_all(events)  # type: ignore[arg-type]
            append_durably(Path(folder) / "durable.jsonl", (str(signals.as_json()) + "\n").encode())
            durable.append(time.perf_counter() - began)
        print(f"signals of one run ({len(events)} events: 30 tool calls, 300 text deltas), median of {args.runs}:")
        print(
            f"  count + append      {median_ms(ours):7.3f} ms   p95 {sorted(ours)[int(0.95 * len(ours))] * 1000:.3f} ms"
        )
        ratio = median_ms(ours) / median_ms(durable)
        print(f"  baseline, fsynced   {median_ms(durable):7.3f} ms   ours/baseline {ratio:.2f}×")

        agents = [f"agent{n}" for n in range(49)]
        calls = [0]
        read = [0]

        async def reflect(*_args: object) -> tuple[str, int]:
            calls[0] += 1
            return "nothing to save", 0

        def transcripts(agent: str, ids: object) -> list[bundle.Conversation]:
            read[0] += 1
            return []

        data = Path(folder) / "data"
        quiet_log = SignalLog(data / "signals")
        now = time.time()
        for agent in ["commander", *agents]:  # each ran a week ago, reflected since
            quiet_log.record(RunSignals(agent=agent, conversation="old", at=now - 7 * 86_400 + 3600))
        evolution = Evolution(data, quiet_log, transcripts, reflect, lambda: agents)
        for agent in ["commander", *agents]:
            evolution._set_last(agent, now - 86_400)
        cycle_times = []
        for _ in range(5):
            began = time.perf_counter()
            outcomes = asyncio.run(evolution.cycle())
            cycle_times.append(time.perf_counter() - began)
        skipped = sum(not o.reflected for o in outcomes)
        print(f"a cycle over {len(outcomes)} agents with nothing new: {calls[0]} model calls, ", end="")
        print(f"{read[0]} transcripts read, {skipped} skipped; median {median_ms(cycle_times):.1f} ms")

        chats = conversations()
        built, whole = [], []
        for _ in range(10):
            began = time.perf_counter()
            text = bundle.build(chats)
            built.append(time.perf_counter() - began)
            began = time.perf_counter()
            bundle.build(chats, max_tokens=10**9)
            whole.append(time.perf_counter() - began)
        print(
            f"bundle from 5 conversations of 600 messages (replies ~1,800 characters): {median_ms(built):.1f} ms, ",
            end="",
        )
        print(f"{len(text):,} characters")
        ratio = median_ms(built) / median_ms(whole)
        print(f"  baseline, no budget: {median_ms(whole):.1f} ms   ours/baseline {ratio:.2f}×")


if __name__ == "__main__":
    main()

"""Flat over days (issue 38): a real `orkas serve --mirror` through a compressed day of use — 50 conversations, 2,000
turns with tool calls, 3 phones following along, the knowledge base watching a folder that changes, learning cycles
forced every 250 turns (tests/soak.py drives it) — side by side with the code as it was (git BASELINE, unpacked and run
the same way, one after the other over fresh data folders).

    .venv/bin/python -m bench.soak [--turns 2000] [--conversations 50] [--baseline REV | --no-baseline]

Printed: the curve (every 100 turns: resident memory, open files, threads, child processes, and the event loop's p99
lateness since the start), then the targets — RSS after the last turn ≤ 1.15× RSS after the first 200, event-loop stall
p99 ≤ 50 ms (`/api/status/loop`: wake-ups every 20 ms, how late), and no leak of open files, threads or processes once
the server is quiet again (counted after the first 200 turns and at the end). The baseline has no loop watch: a
trivial request's round trip (`ping`) is printed for both sides.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
from datetime import date
from pathlib import Path

from tests.soak import Outcome, Plan, Sample, p99, ratio, soak

from bench.cli_start import unpack

BASELINE = "cfe31d2"  # main before the soak's fixes: every conversation's events kept in memory, TLS made per turn


def curve(name: str, sample: Sample) -> None:
    loop = f"{sample.loop_p99_ms:>4} ms" if sample.loop_p99_ms is not None else "   n/a"
    print(
        f"  {name:<8} turn {sample.turns:>5}  {sample.seconds:>6.0f} s  RSS {sample.rss_mb:>6.1f} MB"
        f"  fds {sample.fds:>3}  threads {sample.threads:>3}  children {sample.children:>2}  loop p99 {loop}",
        flush=True,
    )


def report(name: str, outcome: Outcome, warm: int) -> None:
    grown = ratio(outcome, warm)
    first = next((s for s in outcome.samples if s.turns >= warm), None)
    end = outcome.settled
    print(f"{name}:")
    print(f"  RSS end / after {warm} turns: {grown:.3f}× (target ≤ 1.15×)" if grown else "  RSS: no samples")
    if outcome.loop:
        loop = outcome.loop
        print(
            f"  event loop late: p50 {loop['p50_ms']} ms, p99 {loop['p99_ms']} ms (target ≤ 50),"
            f" p99.9 {loop['p999_ms']} ms, worst {loop['max_ms']} ms, {loop['samples']} wake-ups"
        )
    print(f"  ping (a trivial request) p99 {p99(outcome.ping_ms):.0f} ms over {len(outcome.ping_ms)}")
    if first and end:
        print(
            f"  after {warm} turns → quiet at the end: fds {first.fds} → {end.fds}, threads {first.threads} →"
            f" {end.threads}, child processes {first.children} → {end.children}"
        )
    print(
        f"  failed turns {outcome.failed_turns}, learning cycles {outcome.learning_cycles}, events to phones"
        f" {outcome.phone_events:,}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--phones", type=int, default=3)
    parser.add_argument("--workers", type=int, default=3, help="conversations running at once")
    parser.add_argument("--embeddings", default="bundled", help="bundled (the default app's) or none")
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    plan = Plan(
        conversations=args.conversations,
        turns=args.turns,
        phones=args.phones,
        workers=args.workers,
        embeddings=args.embeddings,
    )
    warm = min(200, args.turns // 2)
    print(f"soak — {date.today()} on {platform.machine()} {os.cpu_count()} cores: {plan}")
    sides: list[tuple[str, Path | None]] = [("now", None)]
    if not args.no_baseline:
        app = unpack(args.baseline)
        if app is None:
            print(f"(no baseline: git cannot give {args.baseline})")
        else:
            sides.append((f"before ({args.baseline})", app))
    outcomes = []
    for name, app in sides:
        with tempfile.TemporaryDirectory(prefix="orkas-soak-") as folder:
            outcomes.append((name, soak(Path(folder), plan, app, lambda s, n=name: curve(n[:8], s))))
        if app is not None:
            shutil.rmtree(app.parent, ignore_errors=True)
    for name, outcome in outcomes:
        report(name, outcome, warm)


if __name__ == "__main__":
    main()

"""Every way Orkas starts, each against its budget, side by side with an earlier revision run the same way.

    .venv/bin/python -m bench.starts [--runs 7] [--baseline REV] [--no-window]

Paths: `orkas --help`; `orkas run --json "hi"` to run_start and to the first text (a zero-latency fake model);
`orkas serve` until its page answers; `orkas bridge` until `initialize` is answered; `orkas skills list` and
`orkas mcp list` to their exit; and the desktop window under Xvfb — the splash's first paint, the app's first paint
and the app ready (bench/desktop.py's report). Each run is a fresh process over a fresh data folder; medians of the
sides' interleaved runs (a drift in the machine's load falls on both alike). The baseline is the app folder at
REV, unpacked into a temporary folder; a path that revision did not have is left blank.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from bench import bridge_start, cli_start
from bench.baseline import compiled
from bench.harness_overhead import start_server

ROOT = Path(__file__).resolve().parent.parent
BASELINE = cli_start.BASELINE
LAUNCH = cli_start.LAUNCH
# Seconds. "first paint" and the app's are the window's figures before issue 38 (bench.desktop): keep or beat.
BUDGETS: dict[str, float] = {
    "orkas --help": 0.20,
    "run: run_start": 0.35,
    "run: first text": 1.00,
    "serve: page answers": 1.00,
    "bridge: initialize": 0.30,
    "skills list": 0.50,
    "mcp list": 0.35,
    "window: first paint": 0.60,
    "window: app paint": 1.60,
    "window: app ready": 1.80,
}


def env_for(app: Path, home: Path, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ORKAS_", "ANTHROPIC_", "OPENAI_"))}
    return {**base, "PYTHONPATH": str(app), "ORKAS_HOME": str(home / "data"), "HOME": str(home), **extra}


def command_time(app: Path, *args: str) -> float:
    """Seconds for `orkas ARGS` to finish, over a fresh data folder."""
    with tempfile.TemporaryDirectory(prefix="orkas-starts-") as folder:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", LAUNCH, *args],
            env=env_for(app, Path(folder)),
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
            check=True,
        )
        return time.perf_counter() - started


def serve_time(app: Path) -> float:
    """Seconds from spawning `orkas serve` to its page answering."""
    with tempfile.TemporaryDirectory(prefix="orkas-serve-") as folder:
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-c", LAUNCH, "serve"],
            env=env_for(app, Path(folder)),
            cwd=folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert process.stdout is not None
            url = process.stdout.readline().strip()
            with urllib.request.urlopen(url, timeout=30) as page:  # the app's page, with its token
                page.read()
            return time.perf_counter() - started
        finally:
            process.terminate()
            process.wait(timeout=30)


def window_times(app: Path, display: str) -> dict[str, float]:
    from bench.desktop import orkas_start

    os.environ["PYTHONPATH"] = str(app)
    try:
        paints = orkas_start(display, [sys.executable, "-c", LAUNCH])
    finally:
        os.environ.pop("PYTHONPATH", None)
    return {
        "window: first paint": paints["first_paint"],
        "window: app paint": paints["app_paint"],
        "window: app ready": paints["ready"],
    }


def one_round(app: Path, url: str, token: Path, display: str | None) -> dict[str, float]:
    """One fresh start of every path."""
    run_start, first_text = cli_start.one_run(app, url)
    taken = {
        "orkas --help": cli_start.help_time(app),
        "run: run_start": run_start,
        "run: first text": first_text,
    }
    measured: list[tuple[str, Callable[[], float]]] = [
        ("serve: page answers", lambda: serve_time(app)),
        ("bridge: initialize", lambda: bridge_start.one_run(app, token)[0]),
        ("skills list", lambda: command_time(app, "skills", "list")),
        ("mcp list", lambda: command_time(app, "mcp", "list")),
    ]
    for name, measure in measured:
        try:
            taken[name] = measure()
        except (subprocess.SubprocessError, OSError, AssertionError, KeyError, ValueError):
            pass  # a path this revision did not have
    if display is not None:
        try:
            taken.update(window_times(app, display))
        except RuntimeError:
            pass
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--baseline", default=BASELINE, help=f"the git revision to compare with (default {BASELINE})")
    parser.add_argument("--no-window", action="store_true", help="leave out the desktop window (no Xvfb here)")
    args = parser.parse_args()
    print(f"starts — {time.strftime('%Y-%m-%d')} on {platform.machine()} {os.cpu_count()} cores, {args.runs} runs each")
    compiled(ROOT / "app")
    old = cli_start.unpack(args.baseline)
    apps = [("now", ROOT / "app")] + ([(args.baseline, old)] if old is not None else [])
    server, url = start_server()
    xvfb, display = None, None
    if not args.no_window:
        from tests.display import start_xvfb

        xvfb, display = start_xvfb()
    try:
        with tempfile.TemporaryDirectory(prefix="orkas-bridge-") as folder:
            token = Path(folder) / "token"
            token.write_text("bench")
            for _, app in apps:
                one_round(app, url, token, display)  # the OS file cache warmed for every side alike
            samples: dict[str, list[dict[str, float]]] = {name: [] for name, _ in apps}
            for _ in range(args.runs):
                for name, app in apps:
                    samples[name].append(one_round(app, url, token, display))
    finally:
        server.kill()
        if xvfb is not None:
            xvfb.terminate()
            xvfb.wait(10)
    medians = {name: _medians(taken) for name, taken in samples.items()}
    report(medians, args.baseline)


def _medians(rounds: list[dict[str, float]]) -> dict[str, float]:
    names = {name for taken in rounds for name in taken}
    return {name: statistics.median(t[name] for t in rounds if name in t) for name in names}


def report(medians: dict[str, dict[str, float]], baseline: str) -> None:
    now, before = medians["now"], medians.get(baseline, {})
    print(f"  {'path':22} {'budget':>8} {baseline:>9} {'now':>8} {'now/before':>11}  verdict")
    for name, budget in BUDGETS.items():
        if name not in now:
            continue
        was = before.get(name)
        ratio = f"{now[name] / was:10.2f}x" if was else f"{'':>11}"
        verdict = "met" if now[name] <= budget else "OVER"
        shown = f"{was:8.2f}s" if was else f"{'—':>9}"
        print(f"  {name:22} {budget:7.2f}s {shown} {now[name]:7.2f}s {ratio}  {verdict}")
    if "run: run_start" in now and "orkas --help" in now:
        ratio = now["run: run_start"] / now["orkas --help"]
        print(f"  run_start / --help: {ratio:.2f}x (target ≤ 2×: {'met' if ratio <= 2 else 'NOT met'})")
    print(json.dumps({"now": now, baseline: before}, sort_keys=True))


if __name__ == "__main__":
    main()

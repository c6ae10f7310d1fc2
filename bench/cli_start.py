"""How soon `orkas run` shows it is working: time from the process start to its `run_start` event and to
the first text delta, against the zero-latency fake Anthropic server, and how long `orkas --help` takes —
side by side with the code as it was before (git BASELINE, unpacked into a temporary folder and run the
same way).

    .venv/bin/python -m bench.cli_start [--runs 9] [--baseline REV]

Each run is a new `orkas run --json "hi"` process over an empty data folder; the figures are medians (a
busy 2-core machine varies a lot from run to run), the sides' runs interleaved. Targets (issue 38):
run_start ≤ 2× `orkas --help` and ≤ 0.35 s; first text ≤ 1.0 s.
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
from pathlib import Path

from bench.baseline import compiled, tree_at
from bench.harness_overhead import start_server

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "bfbeeb7"  # main before issue 38 (the SDK on the path, the skills scanned before run_start)
LAUNCH = "import sys; from orkas.cli import main; sys.exit(main())"  # what the `orkas` script runs


def unpack(revision: str) -> Path | None:
    """The app folder at `revision`, in a temporary folder (None when git cannot give it), with the frontend and
    icons beside it as in a checkout (without them the window and `orkas serve` of that revision had no page)."""
    tree = tree_at(revision, ("app", "frontend", "icons"))
    return tree / "app" if tree is not None else None


def one_run(app: Path, url: str) -> tuple[float, float]:
    """Seconds to run_start and to the first text_delta for one fresh process."""
    with tempfile.TemporaryDirectory(prefix="orkas-start-") as home:
        workspace = Path(home) / "w"
        workspace.mkdir()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("ORKAS_", "ANTHROPIC_", "OPENAI_"))},
            "PYTHONPATH": str(app),
            "ORKAS_HOME": str(Path(home) / "data"),
            "ANTHROPIC_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": url,
            "ORKAS_MODEL": "anthropic/claude-test",
        }
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCH, "run", "--json", "--workspace", str(workspace), "hi"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=home,
        )
        assert proc.stdout is not None
        run_start = first_text = float("nan")
        for line in proc.stdout:
            kind = json.loads(line).get("type")
            if kind == "run_start" and run_start != run_start:
                run_start = time.perf_counter() - started
            if kind == "text_delta":
                first_text = time.perf_counter() - started
                break
        proc.wait(timeout=60)
        return run_start, first_text


def help_time(app: Path) -> float:
    """Seconds for `orkas --help` to print and exit."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", LAUNCH, "--help"],
        env={**os.environ, "PYTHONPATH": str(app)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - started


def measure(apps: list[Path], url: str, runs: int) -> list[tuple[float, float, float]]:
    """Medians per app of (run_start, first text, --help), the apps' runs interleaved (a drift in the machine's
    load falls on both alike)."""
    for app in apps:
        one_run(app, url)  # warm the OS file cache, as a second start of the app would be
    samples: list[list[tuple[float, float, float]]] = [[] for _ in apps]
    for _ in range(runs):
        for app, taken in zip(apps, samples, strict=True):
            taken.append((*one_run(app, url), help_time(app)))
    return [tuple(statistics.median(s[i] for s in taken) for i in range(3)) for taken in samples]  # type: ignore[misc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--baseline", default=BASELINE, help=f"the git revision to compare with (default {BASELINE})")
    args = parser.parse_args()
    server, url = start_server()
    try:
        machine = f"{platform.machine()} {os.cpu_count()} cores"
        print(f"cli start — {time.strftime('%Y-%m-%d')} on {machine}, {args.runs} runs")
        compiled(ROOT / "app")
        old_app = unpack(args.baseline)
        measured = measure([ROOT / "app"] + ([old_app] if old_app is not None else []), url, args.runs)
        now, before = measured[0], (measured[1] if old_app is not None else None)
        print(f"  {'':24} {'run_start':>10} {'first text':>11} {'--help':>8} {'run_start/help':>15}")
        rows = [("before (" + args.baseline + ")", before)] if before is not None else []
        for name, (start, text, help_) in [*rows, ("now", now)]:
            print(f"  {name:24} {start:9.2f}s {text:10.2f}s {help_:7.2f}s {start / help_:14.2f}x")
        if before is not None:
            print(f"  {'ratio now/before':24} {now[0] / before[0]:9.2f}x {now[1] / before[1]:10.2f}x")
        start, text, help_ = now
        met = start <= 0.35 and start <= 2 * help_
        print(
            f"  targets: run_start ≤ 0.35 s and ≤ 2× --help ({'met' if met else 'NOT met'}), "
            f"first text ≤ 1.00 s ({'met' if text <= 1.0 else 'NOT met'})"
        )
    finally:
        server.kill()


if __name__ == "__main__":
    main()

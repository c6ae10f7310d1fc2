"""What the read-only sandbox costs per command, side by side with the executor before it (issue 33).

Each command goes through the one executor exactly as the bash tool runs it, confined by bubblewrap: the
executor of BASELINE (main before issue 33: one kept private home per workspace, the workspace writable for
every command) checked out from git into a temporary folder and run in its own process, and today's for a
command nobody approved (read-only, a fresh home, the git shim) and for an approved one (writable, the caches).
Rounds alternate so the machine's drift falls on all alike; each figure is the median over every run.

    .venv/bin/python -m bench.sandbox_cost [--runs N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.baseline import ROOT

BASELINE = "7b37dbb"  # main before issue 33
COMMANDS = {"true": "true", "ls": "ls -la", "git status": "git status --short", "cat": "cat notes.md"}

WORKER = r"""
import asyncio, json, os, sys, time
from pathlib import Path
from orkas.engine.sandbox import PathPolicy
from orkas.engine.sandbox.executor import Executor

home, data, runs, mode = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
commands = json.loads(sys.argv[5])
policy = PathPolicy(home / "ws", home=home)
env = {"PATH": os.environ["PATH"], "HOME": str(home)}
executor = Executor(policy, spill_dir=data / "outputs", base_env=env, home_files={".gitconfig": "[user]\n\tname = A\n"})
assert executor.confined == "bubblewrap", "bubblewrap is needed for this benchmark"
extra = {} if mode == "baseline" else {"writable": mode == "approved"}

async def main():
    found = {}
    for label, command in commands.items():
        await executor.run(command, **extra)  # warm: the private home, the provided files, the caches
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            result = await executor.run(command, **extra)
            times.append(time.perf_counter() - started)
            assert result.exit_code == 0, result.output
        found[label] = times
    print(json.dumps(found))

asyncio.run(main())
"""


def workspace(root: Path) -> Path:
    home = root / "home"
    ws = home / "ws"
    ws.mkdir(parents=True)
    (ws / "notes.md").write_text("# notes\n" * 50)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(ws), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x"], check=True
    )
    return home


def baseline_app(root: Path) -> Path | None:
    """BASELINE's `app/` folder, exported from git (None when git cannot give it)."""
    target = root / "baseline"
    target.mkdir()
    archive = subprocess.run(["git", "archive", BASELINE, "app"], cwd=ROOT, capture_output=True)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target / "app"


def measure(app: Path, home: Path, data: Path, runs: int, mode: str) -> dict[str, list[float]]:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(home), str(data), str(runs), mode, json.dumps(COMMANDS)],
        env={"PYTHONPATH": str(app), "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home)},
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, list[float]] = json.loads(done.stdout)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20, help="commands of each kind per round and mode")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("bwrap") is None:
        sys.exit("bubblewrap is needed for this benchmark")
    root = Path(tempfile.mkdtemp(prefix="orkas-sandbox-cost-"))
    try:
        home = workspace(root)
        old = baseline_app(root)
        modes = {"read-only (unasked)": ROOT / "app", "approved (writable)": ROOT / "app"}
        names = {"read-only (unasked)": "read-only", "approved (writable)": "approved"}
        if old is not None:
            modes = {"baseline (before)": old, **modes}
            names["baseline (before)"] = "baseline"
        found: dict[str, dict[str, list[float]]] = {mode: {c: [] for c in COMMANDS} for mode in modes}
        for _ in range(args.rounds):
            for mode, app in modes.items():
                data = root / f"data-{names[mode]}"
                for label, times in measure(app, home, data, args.runs, names[mode]).items():
                    found[mode][label] += times
        print(f"sandbox cost per command — {time.strftime('%Y-%m-%d')} on {platform.machine()}, "
              f"{args.rounds} rounds × {args.runs} runs, median ms")  # fmt: skip
        first = next(iter(modes))
        print(f"{'command':12}" + "".join(f"{mode:>24}" for mode in modes))
        for label in COMMANDS:
            cells = []
            base = statistics.median(found[first][label])
            for mode in modes:
                value = statistics.median(found[mode][label])
                ratio = f" ({value / base:.2f}×, {1000 * (value - base):+.1f})" if mode != first else ""
                cells.append(f"{1000 * value:.1f}{ratio}")
            print(f"{label:12}" + "".join(f"{cell:>24}" for cell in cells))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

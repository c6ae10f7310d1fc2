"""The window's idle memory for two source trees side by side: an earlier commit (checked out into a
temporary git worktree) and this checkout, each run with its own `app/` first on PYTHONPATH, under
Xvfb. PSS of the whole process tree after `--idle` seconds (bench/desktop.py), median of `--runs`.

    .venv/bin/python -m bench.idle_memory --before 52f09f2 [--runs 3] [--idle 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from tests.display import start_xvfb

from bench.desktop import orkas_idle

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle", type=float, default=8.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "before"
        add = ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), args.before]
        subprocess.run(add, check=True)
        xvfb, display = start_xvfb()
        try:
            sides = {args.before: tree / "app", "this checkout": ROOT / "app"}
            results = {}
            for name, app in sides.items():
                os.environ["PYTHONPATH"] = str(app)
                results[name] = [orkas_idle(display, args.idle)[0] for _ in range(args.runs)]
        finally:
            xvfb.terminate()
            xvfb.wait(10)
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    before, after = (statistics.median(v) for v in results.values())
    print(f"idle memory (PSS of the window's process tree, median of {args.runs}):")
    for name, values in results.items():
        print(f"  {name:>14}: {statistics.median(values):.0f} MB  runs {[round(v) for v in values]}")
    print(f"  this checkout / {args.before}: {after / before:.2f}×")


if __name__ == "__main__":
    main()

"""The window's idle memory against a bare pywebview window of the same size, with what each part costs,
for an earlier commit and this checkout side by side (each run with its own `app/` first on PYTHONPATH), under
Xvfb. Memory is PSS (shared pages split fairly), of the whole process tree, after `--idle` seconds.

Parts:
- the window's own process: Python, the app, and Qt WebEngine's browser side (compositing runs in it);
- the web engine's other processes (the page's renderer, the zygote, the GPU/utility one), each;
- the Python app alone: `orkas serve` after its page has loaded in Chromium, less a bare interpreter;
- the knowledge service: whether numpy or faiss are mapped in the idle window at all (they load on first use).

    .venv/bin/python -m bench.idle_memory --before cfe31d2 [--runs 3] [--idle 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.display import start_xvfb, stop_group

from bench.baseline import tree_at
from bench.desktop import ORKAS, environment, served_in_chromium, tree, wait_report

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 1200, 820  # the Orkas window's size (desktop/window.py): the bare one is made the same
BARE = f"import webview\nwebview.create_window('bare', html='<h1>Hello</h1>', width={WIDTH}, height={HEIGHT})\n"
BARE += "webview.start(gui='qt')\n"


def pss(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def parts_of(root: int) -> dict[str, float]:
    """PSS per process of the tree: the root as "window process", the others by their web engine --type."""
    found: dict[str, float] = {}
    for pid in tree(root):
        if pid == root:
            found["window process"] = pss(pid)
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        kind = next((a.decode().removeprefix("--type=") for a in argv if a.startswith(b"--type=")), "other")
        found[kind] = found.get(kind, 0.0) + pss(pid)
    return found


def knowledge_mapped(pid: int) -> bool:
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False
    return "faiss" in maps or "numpy" in maps


def window_idle(display: str, idle: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        env = environment(display, home)
        env["ORKAS_DESKTOP_REPORT"] = str(home / "report.jsonl")
        process = subprocess.Popen(
            [ORKAS], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            wait_report(home / "report.jsonl")
            time.sleep(idle)
            parts = parts_of(process.pid)
            return {"total": sum(parts.values()), "parts": parts, "knowledge": knowledge_mapped(process.pid)}
        finally:
            stop_group(process)


# What launch.tune_malloc tells glibc in the window's process, as environment variables: the bare window with the
# same tuning is printed for reference (the target is against the bare window as it comes).
TUNED = {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}


def bare_idle(display: str, idle: float, **extra: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        env = {**environment(display, Path(folder)), **extra}
        process = subprocess.Popen(
            [sys.executable, "-c", BARE], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        try:
            time.sleep(idle + 3)  # it reports nothing: its start-up time on top
            parts = parts_of(process.pid)
            return {"total": sum(parts.values()), "parts": parts}
        finally:
            stop_group(process)


def python_app(display: str, idle: float) -> float:
    """`orkas serve`'s PSS once its page has loaded in Chromium (every request the page makes at start served)."""
    with served_in_chromium(display) as (server, _):
        time.sleep(idle + 4)
        return pss(server)


def interpreter() -> float:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(1)
        return pss(process.pid)
    finally:
        process.kill()
        process.wait()


def side(display: str, runs: int, idle: float) -> dict[str, Any]:
    windows = [window_idle(display, idle) for _ in range(runs)]
    middle = sorted(windows, key=lambda w: w["total"])[len(windows) // 2]
    return {
        "totals": [w["total"] for w in windows],
        "parts": middle["parts"],
        "knowledge": any(w["knowledge"] for w in windows),
        "python": statistics.median(python_app(display, idle) for _ in range(runs)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle", type=float, default=10.0)
    args = parser.parse_args()
    before = tree_at(args.before, ("app", "frontend", "icons"))
    if before is None:
        raise SystemExit(f"git cannot give {args.before}")
    xvfb, display = start_xvfb()
    try:
        bares = [bare_idle(display, args.idle) for _ in range(args.runs)]
        tuned_bare = statistics.median(bare_idle(display, args.idle, **TUNED)["total"] for _ in range(args.runs))
        results = {}
        for name, app in ((args.before, before / "app"), ("this checkout", ROOT / "app")):
            os.environ["PYTHONPATH"] = str(app)
            results[name] = side(display, args.runs, args.idle)
    finally:
        xvfb.terminate()
        xvfb.wait(10)
    bare = statistics.median(b["total"] for b in bares)
    bare_parts = sorted(bares, key=lambda b: b["total"])[len(bares) // 2]["parts"]
    base = interpreter()
    print(f"idle memory after {args.idle:.0f} s, PSS of the whole process tree, median of {args.runs} (MB):")
    print(f"  bare pywebview window {WIDTH}x{HEIGHT}: {bare:.0f}  runs {[round(b['total']) for b in bares]}")
    print(f"  (the bare window with the window's malloc tuning: {tuned_bare:.0f})")
    for name, found in results.items():
        total = statistics.median(found["totals"])
        print(f"  {name:>14}: {total:.0f}  (bare + {total - bare:.0f})  runs {[round(t) for t in found['totals']]}")
    print("what each part costs (the median run; bare window's alongside):")
    kinds = sorted({k for found in results.values() for k in found["parts"]} | set(bare_parts))
    print(f"  {'part':<34}{'bare':>8}" + "".join(f"{name[:14]:>16}" for name in results))
    for kind in kinds:
        row = "".join(f"{found['parts'].get(kind, 0.0):16.1f}" for found in results.values())
        print(f"  {kind:<34}{bare_parts.get(kind, 0.0):8.1f}{row}")
    row = "".join(f"{found['python'] - base:16.1f}" for found in results.values())
    print(f"  {'the Python app (orkas serve, page loaded, less a bare interpreter)':<34}{'':>8}{row}")
    row = "".join(f"{'loaded' if found['knowledge'] else 'not loaded':>16}" for found in results.values())
    print(f"  {'the knowledge service (numpy, faiss)':<34}{'':>8}{row}")
    after, earlier = (statistics.median(found["totals"]) for found in reversed(results.values()))
    print(f"  this checkout / {args.before}: {after / earlier:.2f}×; target: bare + 60 MB = {bare + 60:.0f}")


if __name__ == "__main__":
    main()

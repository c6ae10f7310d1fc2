"""Desktop start-up and idle memory, under Xvfb.

Start-up: from spawning `orkas` to the first contentful paint of the window (the app's frame, painted
while the in-process server starts), to the app page's first paint, and to the app being ready (chat
list and settings loaded), as the pages themselves report them (performance timings, epoch-aligned),
over several fresh processes. Baseline: a bare pywebview window on the same Qt stack showing one static
line — the floor any pywebview app starts from.

Idle memory: the proportional set size (PSS, shared pages split fairly) of the whole process tree —
Python, Qt, QtWebEngine's renderer, GPU and utility processes — after the window has sat idle.
Baseline: the same UI served by `orkas serve` in Debian's Chromium (`--app` window), i.e. the engine an
Electron app embeds, without Electron's Node runtime on top: a lower bound for an Electron shell.

    .venv/bin/python -m bench.desktop [--runs 5] [--idle 8]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.display import CHROMIUM_FLAGS, start_xvfb, stop_group

ORKAS = str(Path(sys.executable).parent / "orkas")
BARE = """
import json, sys, time, webview
window = webview.create_window("bare", html="<h1>Hello</h1>")
def shown():
    probe = "new Promise(r => { const p = () => { const e = performance.getEntriesByName('first-contentful-paint')[0];"\
            " e ? r({time_origin: performance.timeOrigin, first_paint: e.startTime}) : setTimeout(p, 10); }; p(); })"
    window.evaluate_js(probe, lambda a: (print(json.dumps(a), flush=True), window.destroy()))
window.events.loaded += shown
webview.start(gui="qt")
"""


def environment(display: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(
        DISPLAY=display,
        HOME=str(home),
        XDG_RUNTIME_DIR=str(home),
        ORKAS_HOME=str(home / "data"),
        QTWEBENGINE_DISABLE_SANDBOX="1",
    )
    return env


def wait_report(report: Path, timeout: float = 60) -> dict[str, dict[str, Any]]:
    """The window's "splash" and "shown" records, once both are there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if report.exists():
            records = {r["event"]: r for r in map(json.loads, report.read_text().splitlines())}
            if "shown" in records and "splash" in records:
                return records
        time.sleep(0.02)
    raise RuntimeError("the window never reported")


def orkas_start(display: str, command: list[str] | None = None) -> dict[str, float]:
    """Seconds from spawning `command` (the checkout's `orkas` by default) to each paint."""
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        env = environment(display, home)
        env["ORKAS_DESKTOP_REPORT"] = str(home / "report.jsonl")
        started = time.time()
        process = subprocess.Popen(
            command or [ORKAS], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            records = wait_report(home / "report.jsonl")
        finally:
            stop_group(process)
    splash, shown = records["splash"], records["shown"]
    origin = shown["time_origin"] / 1000
    return {
        "first_paint": splash["time_origin"] / 1000 + splash["first_paint"] / 1000 - started,
        "app_paint": origin + shown["first_paint"] / 1000 - started,
        "ready": origin + shown["ready"] / 1000 - started,
    }


def bare_start(display: str) -> float:
    with tempfile.TemporaryDirectory() as folder:
        env = environment(display, Path(folder))
        started = time.time()
        done = subprocess.run(
            [sys.executable, "-c", BARE], env=env, capture_output=True, text=True, timeout=60, start_new_session=True
        )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return answer["time_origin"] / 1000 + answer["first_paint"] / 1000 - started


def tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def pss_mb(roots: list[int]) -> tuple[float, int]:
    total_kb, count = 0, 0
    for root in roots:
        for pid in tree(root):
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total_kb += int(line.split()[1])
                        count += 1
            except OSError:
                continue
    return total_kb / 1024, count


def orkas_idle(display: str, idle: float, command: list[str] | None = None) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        env = environment(display, home)
        env["ORKAS_DESKTOP_REPORT"] = str(home / "report.jsonl")
        process = subprocess.Popen(
            command or [ORKAS], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            wait_report(home / "report.jsonl")
            time.sleep(idle)
            return pss_mb([process.pid])
        finally:
            stop_group(process)


def bare_idle(display: str, idle: float) -> tuple[float, int]:
    """The floor of the stack: a pywebview/Qt window with one static line and no Python app behind it."""
    script = "import webview\nwebview.create_window('bare', html='<h1>Hello</h1>')\nwebview.start(gui='qt')\n"
    with tempfile.TemporaryDirectory() as folder:
        env = environment(display, Path(folder))
        process = subprocess.Popen(
            [sys.executable, "-c", script],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            time.sleep(idle + 2)
            return pss_mb([process.pid])
        finally:
            stop_group(process)


@contextmanager
def served_in_chromium(display: str) -> Iterator[tuple[int, int]]:
    """`orkas serve` with its page open in Debian's Chromium (`--app` window): the two process ids, stopped after."""
    chromium = shutil.which("chromium")
    if chromium is None:
        raise RuntimeError("Debian's chromium is needed (scripts/setup.sh installs it)")
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        env = environment(display, home)
        server = subprocess.Popen(
            [ORKAS, "serve"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        browser = subprocess.Popen(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={home / 'profile'}", f"--app={url}"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            yield server.pid, browser.pid
        finally:
            stop_group(browser)
            stop_group(server)


def chromium_idle(display: str, idle: float) -> tuple[float, int]:
    with served_in_chromium(display) as (server, browser):
        time.sleep(idle + 2)  # no page report here: give it the start-up time on top
        return pss_mb([server, browser])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=8.0, help="seconds idle before measuring memory")
    args = parser.parse_args()
    server, display = start_xvfb()
    try:
        bare_start(display)  # warm the disk cache once for both sides
        ours = [orkas_start(display) for _ in range(args.runs)]
        bare = [bare_start(display) for _ in range(args.runs)]
        paint = [r["first_paint"] for r in ours]
        app_paint = [r["app_paint"] for r in ours]
        ready = [r["ready"] for r in ours]
        print(f"start-up over {args.runs} fresh processes (seconds, median / worst):")
        print(f"  orkas: first paint (frame) {statistics.median(paint):.2f} / {max(paint):.2f}")
        print(f"  orkas: app page painted    {statistics.median(app_paint):.2f} / {max(app_paint):.2f}")
        print(f"  orkas: app ready (data)    {statistics.median(ready):.2f} / {max(ready):.2f}")
        print(f"  bare pywebview window      {statistics.median(bare):.2f} / {max(bare):.2f}")
        print(f"  ratio orkas / bare (first paint, median): {statistics.median(paint) / statistics.median(bare):.2f}x")
        ours_mb, ours_n = orkas_idle(display, args.idle)
        bare_mb, bare_n = bare_idle(display, args.idle)
        chrome_mb, chrome_n = chromium_idle(display, args.idle)
        print(f"idle memory after {args.idle:.0f} s (PSS of the whole process tree):")
        print(f"  orkas window              {ours_mb:7.1f} MB in {ours_n} processes")
        print(f"  bare pywebview window     {bare_mb:7.1f} MB in {bare_n} processes")
        print(f"  orkas serve + chromium    {chrome_mb:7.1f} MB in {chrome_n} processes")
        print(
            f"  ratio orkas / bare window: {ours_mb / bare_mb:.2f}x; orkas / chromium shell: {ours_mb / chrome_mb:.2f}x"
        )
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()

"""The installed app against the source checkout: size, start-up and idle memory.

Builds the .deb with build/build.py (xz, as shipped) unless `--deb PATH` names one, installs it with
dpkg (root), and measures side by side, under Xvfb, the installed `/usr/bin/orkas` and the checkout's
`.venv/bin/orkas`: the .deb's size, the installed size, start to first paint (the window's frame) and
to the app's own first paint, and idle memory (PSS of the whole process tree: Python, Qt, the web
engine's processes). The first start of each is cold where the page cache can be dropped (root);
the median of `--runs` after it is warm. Removes the package at the end.

    .venv/bin/python -m bench.bundle [--deb PATH] [--runs 5] [--idle 8]

Goals (issue 18): .deb ≤ 250 MB, first paint ≤ 1.5 s, idle memory ≤ 1.10× the checkout's.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.display import start_xvfb

from bench.desktop import ORKAS, orkas_idle, orkas_start

ROOT = Path(__file__).resolve().parent.parent


def drop_caches() -> bool:
    subprocess.run(["sync"], check=False)
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def build(out: Path) -> Path:
    command = [sys.executable, str(ROOT / "build" / "build.py"), "--out", str(out), "--formats", "deb"]
    subprocess.run(command, check=True)
    [deb] = out.glob("orkas_*.deb")
    return deb


def starts(display: str, command: list[str], runs: int) -> tuple[dict[str, float], dict[str, float], bool]:
    cold = drop_caches()
    first = orkas_start(display, command)
    warm = [orkas_start(display, command) for _ in range(runs)]
    return first, {k: statistics.median(r[k] for r in warm) for k in first}, cold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deb", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=8.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        deb = args.deb or build(Path(folder))
        subprocess.run(["dpkg", "-i", str(deb)], check=True, stdout=subprocess.DEVNULL)
        try:
            du = subprocess.run(["du", "-sk", "/opt/orkas"], capture_output=True, text=True, check=True)
            installed_kb = int(du.stdout.split()[0])
            xvfb, display = start_xvfb()
            try:
                sides = {"checkout": [ORKAS], "installed": ["/usr/bin/orkas"]}
                start = {name: starts(display, command, args.runs) for name, command in sides.items()}
                memory = {name: orkas_idle(display, args.idle, command) for name, command in sides.items()}
            finally:
                xvfb.terminate()
                xvfb.wait(10)
        finally:
            subprocess.run(["dpkg", "-r", "orkas"], check=False, stdout=subprocess.DEVNULL)
    print(f".deb {deb.stat().st_size / 1e6:.1f} MB (xz); installed {installed_kb / 1024:.0f} MB in /opt/orkas")
    print(f"{'':>28} {'checkout':>10} {'installed':>10} {'installed/checkout':>19}")
    cold = all(c for _, _, c in start.values())
    for label, index, key in (
        (f"first paint, {'cold' if cold else 'first'} start", 0, "first_paint"),
        ("first paint, warm (median)", 1, "first_paint"),
        ("app's first paint, warm", 1, "app_paint"),
    ):
        a, b = start["checkout"][index][key], start["installed"][index][key]  # type: ignore[index]
        print(f"{label:>28} {a:>9.3f}s {b:>9.3f}s {b / a:>18.2f}×")
    a, b = memory["checkout"][0], memory["installed"][0]
    print(f"{'idle memory (PSS, MB)':>28} {a:>10.0f} {b:>10.0f} {b / a:>18.2f}×")


if __name__ == "__main__":
    main()

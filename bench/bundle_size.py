"""The .deb against a baseline build, side by side: the package's size, its size installed in /opt/orkas, and
the installed app's cold first paint.

The new package is built from this checkout with build/build.py (xz, as shipped) unless `--deb PATH` names
one; the baseline is `--baseline-deb PATH`, or built the same way from a clean worktree at `--baseline REV`
(default cfe31d2, main before the .deb was slimmed), with this venv's PyInstaller. Each round installs each
package in turn with dpkg (root), alternating which goes first, drops the page cache (root) and times
`/usr/bin/orkas` under Xvfb from spawning to the window's first paint (its frame) and to the app's own first
paint — then one warm start. Medians over `--runs` rounds. The package is purged at the end.

    .venv/bin/python -m bench.bundle_size [--deb PATH] [--baseline-deb PATH | --baseline REV] [--runs 5]

Goal (the one-BLAS issue): .deb ≤ 200 MB, the same features, cold first paint unchanged or better.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.display import start_xvfb

from bench.bundle import drop_caches
from bench.desktop import orkas_start

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "cfe31d2"
INSTALLED = ["/usr/bin/orkas"]


def build(source: Path, out: Path) -> Path:
    command = [sys.executable, str(source / "build" / "build.py"), "--out", str(out), "--formats", "deb"]
    subprocess.run(command, check=True, cwd=source)
    [deb] = out.glob("orkas_*.deb")
    return deb


def build_at(revision: str, folder: Path) -> Path:
    """The package as `revision` built it: a detached worktree of it, built, then removed (the .deb stays)."""
    tree = folder / "baseline-tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), revision], check=True, cwd=ROOT)
    try:
        return build(tree, folder / "baseline")
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], check=False, cwd=ROOT)


def dpkg(*args: str) -> None:
    """dpkg, waiting while another dpkg or apt holds its lock (the machine is shared)."""
    for _ in range(300):
        done = subprocess.run(["dpkg", *args], capture_output=True, text=True)
        if done.returncode == 0:
            return
        if "lock" not in done.stderr:
            raise RuntimeError(f"dpkg {' '.join(args)}: {done.stderr.strip()}")
        time.sleep(2)
    raise RuntimeError("dpkg: its lock was held for 10 minutes")


def installed(deb: Path) -> int:
    """Install `deb` (replacing whichever orkas is there); its size in /opt/orkas, in KB."""
    dpkg("-i", str(deb))
    du = subprocess.run(["du", "-sk", "/opt/orkas"], capture_output=True, text=True, check=True)
    return int(du.stdout.split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deb", type=Path, help="the new package (default: built from this checkout)")
    parser.add_argument("--baseline-deb", type=Path, help="the baseline package (default: built at --baseline)")
    parser.add_argument("--baseline", default=BASELINE, help="the revision to build the baseline from")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "orkas"], capture_output=True, text=True).stdout
    if "installed" in status.split():
        parser.error("orkas is installed on this machine already: `dpkg -r orkas` first")
    with tempfile.TemporaryDirectory() as folder:
        debs = {
            "baseline": args.baseline_deb or build_at(args.baseline, Path(folder)),
            "new": args.deb or build(ROOT, Path(folder) / "new"),
        }
        sizes: dict[str, int] = {}
        cold: dict[str, list[dict[str, float]]] = {name: [] for name in debs}
        warm: dict[str, list[dict[str, float]]] = {name: [] for name in debs}
        dropped = True
        xvfb, display = start_xvfb()
        try:
            for round_ in range(args.runs):
                for name in list(debs) if round_ % 2 == 0 else list(reversed(debs)):
                    sizes[name] = installed(debs[name])
                    dropped = drop_caches() and dropped
                    cold[name].append(orkas_start(display, INSTALLED))
                    warm[name].append(orkas_start(display, INSTALLED))
        finally:
            xvfb.terminate()
            xvfb.wait(10)
            dpkg("--purge", "orkas")
        deb_mb = {name: deb.stat().st_size / 1e6 for name, deb in debs.items()}
    print(f"baseline: {debs['baseline'].name} ({args.baseline_deb or args.baseline}); runs: {args.runs}")
    print(f"{'':>34} {'baseline':>10} {'new':>10} {'new/baseline':>13}")
    rows = [
        (".deb (MB, xz)", deb_mb["baseline"], deb_mb["new"], ".1f"),
        ("installed in /opt/orkas (MB)", sizes["baseline"] / 1024, sizes["new"] / 1024, ".0f"),
    ]
    start = "cold" if dropped else "first (page cache not dropped)"
    for label, runs, key in (
        (f"first paint, {start} (s)", cold, "first_paint"),
        ("app's first paint, cold (s)", cold, "app_paint"),
        ("first paint, warm (s)", warm, "first_paint"),
    ):
        a, b = (statistics.median(r[key] for r in runs[name]) for name in ("baseline", "new"))
        rows.append((label, a, b, ".3f"))
    for label, a, b, form in rows:
        print(f"{label:>34} {a:>10{form}} {b:>10{form}} {b / a:>12.2f}×")


if __name__ == "__main__":
    main()

"""What checkpoints cost (issue 36): a checkpoint of an unchanged 10,000-file, 200 MB workspace (target ≤ 100 ms on
2 cores), a first one (≤ 3 s), storage growing by the changed bytes only, and a 50-turn session in a real repository
(this project's own tree, from `git archive HEAD`). Side by side with what a git-based checkpoint costs (Codex and
goose rely on git): `git add -A` into a private index, then `git write-tree`, on the same folder.

    .venv/bin/python -m bench.checkpoints [--files 10000] [--mb 200] [--runs 7] [--turns 50] [--dir FOLDER]

`--dir`: where the workspaces and the store are made (a temporary folder inside it; the system's temporary folder by
default). On the CI machine /tmp creates files ~30× slower than another folder of the same disk: say which.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.baseline import ROOT
from orkas.engine.checkpoints.restore import rewind
from orkas.engine.checkpoints.store import CheckpointStore


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def timed(action: object) -> float:
    started = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - started


def git_snapshot(folder: Path, index: Path) -> float:
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}

    def run() -> None:
        subprocess.run("git add -A && git write-tree", shell=True, cwd=folder, env=env, check=True, capture_output=True)

    return timed(run)


def synthetic(root: Path, files: int, megabytes: int, seed: int = 1) -> Path:
    ws = root / "ws"
    rng = random.Random(seed)
    average = megabytes * 1024 * 1024 // files
    for i in range(files):
        folder = ws / f"pkg{i % 100:02d}" / f"mod{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.dat").write_bytes(rng.randbytes(max(1, int(average * rng.uniform(0.5, 1.5)))))
    (ws / ".gitignore").write_text("*.log\nbuild/\n")
    old = time.time() - 3600  # out of the two seconds where a same-size rewrite could share a time stamp
    for path in ws.rglob("*"):
        os.utime(path, (old, old))
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    os.sync()  # the workspace was there before: its 200 MB are on disk, not dirty pages the checkpoint waits behind
    return ws


def part_a(root: Path, files: int, megabytes: int, runs: int) -> None:
    ws = synthetic(root, files, megabytes)
    total = size_of(ws) - size_of(ws / ".git")
    print(f"workspace: {files} files, {total / 1e6:.0f} MB")
    store = CheckpointStore(root / "store")
    first = store.take(ws)
    git_first = git_snapshot(ws, root / "index")
    ratio = first.seconds / git_first
    print(f"first checkpoint      {first.seconds * 1000:8.0f} ms   git {git_first * 1000:8.0f} ms   ratio {ratio:.2f}×")
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(store.take(ws).seconds)
        theirs.append(git_snapshot(ws, root / "index"))
    fresh = [CheckpointStore(root / "store").take(ws).seconds for _ in range(3)]  # a new process: manifests read back
    mine, git = statistics.median(ours), statistics.median(theirs)
    print(
        f"unchanged (median)    {mine * 1000:8.1f} ms   git {git * 1000:8.1f} ms   ratio {mine / git:.2f}×   "
        f"(max {max(ours) * 1000:.1f} ms; a fresh store {statistics.median(fresh) * 1000:.1f} ms)"
    )
    grown_before = size_of(root / "store")
    changed = 0
    target = ws / "pkg00" / "mod0" / "f0.dat"
    for _ in range(runs):
        data = os.urandom(4096)
        with target.open("ab") as f:
            f.write(data)
        changed += target.stat().st_size
        store.take(ws)
    grown = size_of(root / "store") - grown_before
    print(
        f"one file appended to, {runs}×: stored {grown / 1e3:.0f} KB for {changed / 1e3:.0f} KB of changed files "
        f"({grown / changed:.2f}× the changed bytes)"
    )


def part_b(root: Path, turns: int) -> None:
    ws = root / "repo"
    ws.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(ws)], input=archive, check=True)
    files = sorted(p for p in ws.rglob("*") if p.is_file())
    print(f"\nthis repository at HEAD: {len(files)} files, {size_of(ws) / 1e6:.1f} MB — {turns} turns")
    store = CheckpointStore(root / "store-b")
    rng = random.Random(7)
    first = store.take(ws)
    # A file changed in the last two seconds is read again (its ctime could hide a same-size rewrite): the tree was
    # just unpacked, so wait that out once, as a real session's turns are seconds apart.
    time.sleep(2.1)
    store.take(ws)
    ids, times, changed = [first.id], [], 0
    for turn in range(turns):
        for path in rng.sample(files, rng.randint(1, 3)):  # a turn's edits
            if path.exists():
                with path.open("a") as f:
                    f.write(f"\n# turn {turn}\n")
                changed += path.stat().st_size
        if turn % 5 == 0:
            made = ws / f"notes_{turn}.md"
            made.write_text("made by a command\n" * 50)
            changed += made.stat().st_size
        if turn % 10 == 9:
            doomed = rng.choice(files)
            doomed.unlink(missing_ok=True)
        taken = store.take(ws)
        times.append(taken.seconds)
        ids.append(taken.id)
    grown = size_of(root / "store-b")
    times.sort()
    print(
        f"first checkpoint {first.seconds * 1000:.0f} ms; per turn median {statistics.median(times) * 1000:.1f} ms, "
        f"p95 {times[int(len(times) * 0.95) - 1] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms"
    )
    print(
        f"store: {grown / 1e6:.2f} MB after {turns} turns (the tree itself {first.new_bytes / 1e6:.2f} MB; "
        f"changed files {changed / 1e6:.2f} MB)"
    )
    back = timed(lambda: rewind(store, ws, ids[1]))
    print(f"rewind across {turns - 1} turns: {back * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    root = Path(tempfile.mkdtemp(prefix="orkas-bench-checkpoints-", dir=args.dir))
    print(f"in {root.parent}")
    try:
        part_a(root, args.files, args.mb, args.runs)
        part_b(root, args.turns)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

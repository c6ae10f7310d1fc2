"""`orkas serve --background` and `--stop`: the server in a session of its own, for scheduled work while no window
is open; and ending it.

The background server is `orkas serve` with the same arguments, started detached; this command waits until it says
its URL (or fails), prints it with the pid, and returns. `<data>/background.json` keeps the pid; `--stop` sends it
SIGTERM — after checking that the pid is still an `orkas serve` (a pid the system gave to another program since is
left alone) — and waits for it to end.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

EXIT_OK, EXIT_FAILED = 0, 1
STARTED = 60.0  # seconds for the background server to say its URL
ENDED = 20.0  # seconds for it to end after SIGTERM


def _record(env: Mapping[str, str]) -> Path:
    from orkas.core.paths import data_dir

    return data_dir(env.get("ORKAS_HOME")) / "background.json"


def _alive(pid: int) -> bool:
    """`pid` runs and is an `orkas … serve` (its command line says so)."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        try:
            os.kill(pid, 0)  # no /proc (macOS): whether it runs is all we can see
            return True
        except OSError:
            return False
    return b"serve" in words and any(b"orkas" in word for word in words)


def _exists(pid: int) -> bool:
    """Any process has `pid` (a zombie is none: its parent, init, reaps it at once)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except OSError:
        try:
            os.kill(pid, 0)
            return True
        except OSError:
            return False
    except IndexError:
        return False


def running(env: Mapping[str, str]) -> int | None:
    try:
        pid = int(json.loads(_record(env).read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid if _alive(pid) else None


def start(argv: Sequence[str], env: Mapping[str, str]) -> int:
    from orkas.core.fsutil import atomic_write
    from orkas.core.resources import orkas_command
    from orkas.engine.sandbox.executor import start_detached

    already = running(env)
    if already is not None:
        print(f"orkas: Orkas already serves in the background (process {already}); `orkas serve --stop` ends it",
              file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    record = _record(env)
    output = record.with_name("background.out")  # its first line holds the token: the private data folder only
    pid = start_detached(orkas_command(*[a for a in argv if a != "--background"]), env=env, output=output)
    atomic_write(record, (json.dumps({"pid": pid, "started": time.time()}) + "\n").encode())
    deadline = time.monotonic() + STARTED
    while time.monotonic() < deadline:
        said = output.read_text(errors="replace") if output.exists() else ""
        url = next((line for line in said.splitlines() if line.startswith("http://")), None)
        if url:
            print(url, flush=True)
            print(f"Orkas serves in the background (process {pid}): scheduled work fires while it runs. "
                  "`orkas serve --stop` ends it.", file=sys.stderr)  # fmt: skip
            return EXIT_OK
        if not _alive(pid):
            print(f"orkas: the background server stopped: {said.strip()[-500:] or 'no reason given'}", file=sys.stderr)
            return EXIT_FAILED
        time.sleep(0.05)
    print(f"orkas: the background server (process {pid}) did not start in {STARTED:.0f} s", file=sys.stderr)
    return EXIT_FAILED


def stop(env: Mapping[str, str]) -> int:
    pid = running(env)
    if pid is None:
        print("no Orkas serves in the background")
        return EXIT_OK
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + ENDED
    while time.monotonic() < deadline:
        if not _exists(pid):  # gone, not only past its command line: its port and locks are free now
            _record(env).unlink(missing_ok=True)
            _record(env).with_name("background.out").unlink(missing_ok=True)  # its URL held the old token
            print(f"stopped the background Orkas (process {pid})")
            return EXIT_OK
        time.sleep(0.05)
    print(f"orkas: process {pid} did not end in {ENDED:.0f} s", file=sys.stderr)
    return EXIT_FAILED

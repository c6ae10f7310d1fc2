"""Limits on what one command may consume: time, processes, and the disk its output spills to.

Processes are capped with a pids cgroup where Orkas may create one (root, or a delegated cgroup), and
otherwise with RLIMIT_NPROC, which the kernel counts per user namespace — so inside bubblewrap's user
namespace it caps this command's processes, not the person's. (Root is exempt from RLIMIT_NPROC:
only the cgroup holds there.) The limit is applied by a two-line shell prefix that moves itself into
the cgroup and sets the rlimit before it execs the command, so nothing forks before the limit holds.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PidsMethod = Literal["cgroup", "rlimit", "none"]
_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Limits:
    max_timeout: float = 600.0  # seconds; the model cannot ask for more
    default_timeout: float = 120.0
    pids: int = 512  # processes and threads per command
    spill_bytes: int = 64 * 1024 * 1024  # of one command's full output kept on disk
    spill_total_bytes: int = 512 * 1024 * 1024  # of all kept outputs together
    spill_days: float = 7.0  # outputs older than this are removed

    def timeout(self, asked: float | None) -> float:
        """The timeout a command gets: what was asked for, never more than the configured maximum."""
        wanted = self.default_timeout if asked is None else asked
        return max(1.0, min(float(wanted), self.max_timeout))


def _pids_cgroup_parent() -> Path | None:
    """A pids cgroup folder under which Orkas may create one cgroup per command, if there is one."""
    candidates: list[Path] = []
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        number, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):  # cgroup v1
            candidates.append(Path("/sys/fs/cgroup/pids") / path.lstrip("/"))
        elif number == "0" and controllers == "":  # cgroup v2: pids must be delegated to our subtree
            own = Path("/sys/fs/cgroup") / path.lstrip("/")
            with contextlib.suppress(OSError):
                if "pids" in (own / "cgroup.subtree_control").read_text().split():
                    candidates.append(own)
    for parent in candidates:
        _sweep(parent)
        folder = parent / f"orkas-{os.getpid()}"
        try:
            folder.mkdir(exist_ok=True)
            if (folder / "pids.max").exists() or _enable_v2(folder):
                atexit.register(_remove_tree, folder)
                return folder
        except OSError:
            continue
    return None


def _sweep(parent: Path) -> None:
    """Remove the cgroups left by Orkas processes that are gone (a crash skips their exit handler)."""
    for folder in parent.glob("orkas-*"):
        pid = folder.name.removeprefix("orkas-")
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _remove_tree(folder)


def _remove_tree(folder: Path) -> None:
    with contextlib.suppress(OSError):
        for child in folder.iterdir():
            if child.is_dir():
                with contextlib.suppress(OSError):
                    child.rmdir()
        folder.rmdir()


def _enable_v2(folder: Path) -> bool:
    try:
        (folder / "cgroup.subtree_control").write_text("+pids")
        return True
    except OSError:
        return False


class PidsLimiter:
    """Caps the processes of each command. `method` says how, so settings can tell the person."""

    def __init__(self, limit: int, *, user_namespace: bool) -> None:
        self.limit = limit
        self._parent = _pids_cgroup_parent() if sys.platform.startswith("linux") else None
        # Outside a user namespace RLIMIT_NPROC counts all the person's processes: useless as a per-command cap.
        rlimit = user_namespace and os.geteuid() != 0
        self.method: PidsMethod = "cgroup" if self._parent else ("rlimit" if rlimit else "none")

    def new_group(self) -> Path | None:
        """A fresh cgroup for one command (None when cgroups are not available)."""
        if self._parent is None:
            return None
        group = self._parent / f"cmd-{next(_ids)}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(self.limit))
        except OSError:
            return None
        return group

    def prefix(self, group: Path | None) -> list[str]:
        """The shell prefix that puts the command under the limit, then execs it (`"$@"`)."""
        script = 'if [ -n "$1" ]; then echo $$ > "$1/cgroup.procs" || exit 125; fi; shift; '
        if self.method == "rlimit":
            script += f"ulimit -u {self.limit} 2>/dev/null; "
        return ["/bin/sh", "-c", script + 'exec "$@"', "orkas-limit", str(group or "")]

    @staticmethod
    def kill_group(group: Path | None) -> None:
        """SIGKILL whatever is left in a command's cgroup (even what left its process group)."""
        if group is None:
            return
        for _ in range(20):
            try:
                pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
            except OSError:
                return
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    @staticmethod
    def remove_group(group: Path | None) -> None:
        if group is None:
            return
        for _ in range(50):
            try:
                group.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                PidsLimiter.kill_group(group)
                time.sleep(0.02)


def prune_spills(folder: Path, limits: Limits, now: float | None = None) -> int:
    """Remove kept outputs older than `spill_days`, then the oldest until the rest fit `spill_total_bytes`.

    Returns how many files were removed. Never raises."""
    now = time.time() if now is None else now
    try:
        entries = [(p, p.stat()) for p in folder.iterdir() if p.is_file()]
    except OSError:
        return 0
    removed = 0
    kept: list[tuple[Path, os.stat_result]] = []
    for path, info in entries:
        if now - info.st_mtime > limits.spill_days * 86400:
            with contextlib.suppress(OSError):
                path.unlink()
                removed += 1
        else:
            kept.append((path, info))
    kept.sort(key=lambda e: e[1].st_mtime)
    total = sum(info.st_size for _, info in kept)
    for path, info in kept:
        if total <= limits.spill_total_bytes:
            break
        with contextlib.suppress(OSError):
            path.unlink()
            removed += 1
            total -= info.st_size
    return removed

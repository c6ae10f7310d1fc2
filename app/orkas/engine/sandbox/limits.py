"""Limits on what one command may consume: time, processes, memory, and the disk its output spills to.

Processes and memory are capped with cgroups where Orkas may create them (root, or a delegated cgroup:
the `pids` and `memory` controllers, v1 or v2), so the cap covers the whole command with everything it
starts. Beside that, always, each process of the command gets RLIMIT_DATA (its heap and writable
mappings; unlike RLIMIT_AS it leaves alone the large reservations JVMs and V8 make and never touch),
and — where no pids cgroup exists — RLIMIT_NPROC, which the kernel counts per user namespace, so inside
bubblewrap's user namespace it caps this command's processes, not the person's (root is exempt from it:
only the cgroup holds there). The limits are applied by a short shell prefix that moves itself into the
cgroups and sets the rlimits before it execs the command, so nothing forks before they hold.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Method = Literal["cgroup", "rlimit", "none"]
PidsMethod = Method
_ids = itertools.count(1)
TOTAL_PIDS_FACTOR = 4  # processes of all commands at once, in per-command caps
GiB = 1 << 30
MiB = 1 << 20


@dataclass(frozen=True, slots=True)
class Limits:
    max_timeout: float = 600.0  # seconds; the model cannot ask for more
    default_timeout: float = 120.0
    pids: int = 512  # processes and threads per command
    memory: int = 4 * GiB  # bytes: the whole command (cgroup), and each of its processes' heap (rlimit)
    memory_total: int | None = None  # bytes for all commands at once (cgroup); None: half the machine's RAM
    scratch: int = 1 * GiB  # bytes of the command's private /tmp (in memory)
    home: int = 512 * MiB  # bytes of the command's fresh home (in memory), caches aside
    spill_bytes: int = 64 * 1024 * 1024  # of one command's full output kept on disk
    spill_total_bytes: int = 512 * 1024 * 1024  # of all kept outputs together
    spill_days: float = 7.0  # outputs older than this are removed

    def total_memory(self) -> int:
        """What all running commands together may use: the setting, else half the machine's memory (never less
        than one command's cap, never more than the machine has)."""
        if self.memory_total is not None:
            return self.memory_total
        physical = _physical_memory()
        if physical is None:
            return 2 * self.memory
        return max(min(self.memory, physical), physical // 2)

    def timeout(self, asked: float | None) -> float:
        """The timeout a command gets: what was asked for, never more than the configured maximum."""
        wanted = self.default_timeout if asked is None else asked
        return max(1.0, min(float(wanted), self.max_timeout))


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup_parents() -> dict[str, Path]:
    """For each controller Orkas may use ("pids", "memory"), a folder under which it may create one cgroup per
    command. cgroup v1 has a hierarchy per controller; v2 one tree, where the controllers must be delegated."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    candidates: dict[str, list[Path]] = {"pids": [], "memory": []}
    for line in lines:
        number, controllers, path = line.split(":", 2)
        for name in candidates:
            if name in controllers.split(","):  # cgroup v1
                candidates[name].append(Path("/sys/fs/cgroup") / name / path.lstrip("/"))
        if number == "0" and controllers == "":  # cgroup v2
            own = Path("/sys/fs/cgroup") / path.lstrip("/")
            with contextlib.suppress(OSError):
                delegated = (own / "cgroup.subtree_control").read_text().split()
                for name in candidates:
                    if name in delegated:
                        candidates[name].append(own)
    found: dict[str, Path] = {}
    for name, parents in candidates.items():
        for parent in parents:
            folder = _own_folder(parent, name)
            if folder is not None:
                found[name] = folder
                break
    return found


def _own_folder(parent: Path, controller: str) -> Path | None:
    _sweep(parent)
    folder = parent / f"orkas-{os.getpid()}"
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        return None
    knob = "pids.max" if controller == "pids" else "memory.max"
    v1_knob = "pids.max" if controller == "pids" else "memory.limit_in_bytes"
    if (folder / v1_knob).exists() or (folder / knob).exists() or _enable_v2(folder, controller):
        atexit.register(_remove_tree, folder)
        return folder
    _remove_tree(folder)
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


def _enable_v2(folder: Path, controller: str) -> bool:
    try:
        (folder / "cgroup.subtree_control").write_text(f"+{controller}")
        return True
    except OSError:
        return False


class ProcessLimiter:
    """Caps the processes and the memory of each command. `pids_method` and `memory_method` say how, so
    settings can tell the person."""

    def __init__(self, limits: Limits, *, user_namespace: bool) -> None:
        self.limits = limits
        linux = sys.platform.startswith("linux")
        self._parents = _cgroup_parents() if linux else {}
        # Outside a user namespace RLIMIT_NPROC counts all the person's processes: useless as a per-command cap.
        nproc = user_namespace and os.geteuid() != 0
        self.pids_method: Method = "cgroup" if "pids" in self._parents else ("rlimit" if nproc else "none")
        self.memory_method: Method = "cgroup" if "memory" in self._parents else ("rlimit" if linux else "none")
        # The folder holding every command's group is capped too: eight background builds at 4 GB each must not
        # take a 16 GB machine down. None when that cap cannot be set (no memory cgroup: only per process).
        self.memory_total: int | None = self._cap_all("memory", limits.total_memory())
        self._cap_all("pids", limits.pids * TOTAL_PIDS_FACTOR)

    def _cap_all(self, controller: str, value: int) -> int | None:
        parent = self._parents.get(controller)
        if parent is None:
            return None
        if controller == "memory":
            with contextlib.suppress(OSError):  # cgroup v1 before 5.x: a parent's cap must cover its children
                (parent / "memory.use_hierarchy").write_text("1")
        try:
            (parent / _knob(parent, controller)).write_text(str(value))
        except OSError:
            return None
        return value

    @property
    def method(self) -> Method:
        """How processes are capped (kept for callers that ask only about processes)."""
        return self.pids_method

    def new_group(self) -> list[Path]:
        """Fresh cgroups for one command (empty when cgroups are not available). Never raises. cgroup v2 has one
        tree: there both controllers share the command's one group; v1 has a group per controller."""
        groups: list[Path] = []
        values = {"pids": str(self.limits.pids), "memory": str(self.limits.memory)}
        by_parent: dict[Path, list[str]] = {}
        for controller, parent in self._parents.items():
            by_parent.setdefault(parent, []).append(controller)
        for parent, controllers in by_parent.items():
            group = parent / f"cmd-{next(_ids)}"
            try:
                group.mkdir()
                for controller in controllers:
                    (group / _knob(group, controller)).write_text(values[controller])
            except OSError:
                self.remove_group([group])
                continue
            groups.append(group)
        return groups

    def prefix(self, groups: Sequence[Path]) -> list[str]:
        """The shell prefix that puts the command under the limits, then execs it (`"$@"`)."""
        script = 'while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 125; shift; done; shift; '
        if self.pids_method == "rlimit":
            script += f"ulimit -u {self.limits.pids} 2>/dev/null; "
        if self.memory_method != "none":
            script += f"ulimit -d {self.limits.memory // 1024} 2>/dev/null; "
        return ["/bin/sh", "-c", script + 'exec "$@"', "orkas-limit", *map(str, groups), "--"]

    @staticmethod
    def kill_group(groups: Sequence[Path]) -> None:
        """SIGKILL whatever is left in a command's cgroups (even what left its process group)."""
        for group in groups:
            for _ in range(20):
                try:
                    pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
                except OSError:
                    break
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.01)

    @staticmethod
    def remove_group(groups: Sequence[Path]) -> None:
        for group in groups:
            for _ in range(50):
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    ProcessLimiter.kill_group([group])
                    time.sleep(0.02)


def _knob(group: Path, controller: str) -> str:
    """The file that sets a controller's limit in `group` (v2, or v1's name for memory)."""
    if controller == "pids":
        return "pids.max"
    return "memory.max" if (group / "memory.max").exists() else "memory.limit_in_bytes"


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

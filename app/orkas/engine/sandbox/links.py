"""Which files are protected, by inode: so a hard link to one, planted in the workspace, is not read.

A hard link is the same file under another name: the path policy's containment checks pass for the
name inside the workspace. Only files with more than one link can be reached that way, so the index
holds only those: every multiply-linked regular file in the protected places (credential folders,
the app's data), in /etc, and the home folder's own top-level files (.bash_history, .netrc, .env…).
Walking is bounded; when the budget runs out the answer is "unknown", and the caller refuses every
multiply-linked file rather than guess (fail closed). The index is rebuilt at most every 30 seconds.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterable
from pathlib import Path

BUDGET = 50_000  # directory entries looked at per rebuild
TTL = 30.0
SYSTEM_SECRETS = (Path("/etc"),)
_lock = threading.Lock()
_cache: dict[tuple[str, ...], tuple[float, frozenset[tuple[int, int]] | None]] = {}


def protected_inodes(home: Path, protected: Iterable[Path]) -> frozenset[tuple[int, int]] | None:
    """(device, inode) of every multiply-linked protected file; None when there were too many to look at."""
    places = tuple(sorted({str(p) for p in protected}))
    key = (str(home), *places)
    with _lock:
        found = _cache.get(key)
        if found is not None and time.monotonic() - found[0] < TTL:
            return found[1]
    inodes = _scan(home, [Path(p) for p in places])
    with _lock:
        _cache[key] = (time.monotonic(), inodes)
    return inodes


def _scan(home: Path, places: list[Path]) -> frozenset[tuple[int, int]] | None:
    found: set[tuple[int, int]] = set()
    budget = [BUDGET]
    try:
        for entry in os.scandir(home):
            budget[0] -= 1
            _note(entry, found)
    except OSError:
        pass
    for place in [*places, *SYSTEM_SECRETS]:
        if not _walk(place, found, budget):
            return None
    return frozenset(found)


def _note(entry: os.DirEntry[str], found: set[tuple[int, int]]) -> None:
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        found.add((info.st_dev, info.st_ino))


def _walk(root: Path, found: set[tuple[int, int]], budget: list[int]) -> bool:
    """False when the budget ran out."""
    try:
        info = root.lstat()
    except OSError:
        return True
    if stat.S_ISREG(info.st_mode):
        if info.st_nlink > 1:
            found.add((info.st_dev, info.st_ino))
        return True
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            budget[0] -= 1
            if budget[0] < 0:
                return False
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            else:
                _note(entry, found)
    return True


def forget() -> None:
    """Drop the cached index (tests, and after the person changes protected places)."""
    with _lock:
        _cache.clear()
        _names.clear()


_names: dict[tuple[str, ...], tuple[float, list[Path]]] = {}
NAMES_BUDGET = 200_000


def planted_names(roots: Iterable[Path], home: Path, protected: Iterable[Path]) -> list[Path]:
    """Names inside `roots` of protected files (hard links someone put there), for the sandbox to mask.

    Costs nothing in the usual case: only when some protected file has more than one name are the roots
    searched for it (bounded, cached like the index)."""
    inodes = protected_inodes(home, protected)
    if not inodes:
        return []
    folders = tuple(str(r) for r in roots)
    key = (*folders, *sorted(f"{d}:{i}" for d, i in inodes))
    with _lock:
        found = _names.get(key)
        if found is not None and time.monotonic() - found[0] < TTL:
            return found[1]
    names: list[Path] = []
    budget = [NAMES_BUDGET]
    for folder in folders:
        stack = [Path(folder)]
        while stack and budget[0] > 0:
            current = stack.pop()
            try:
                entries = list(os.scandir(current))
            except OSError:
                continue
            for entry in entries:
                budget[0] -= 1
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if info.st_nlink > 1 and (info.st_dev, info.st_ino) in inodes:
                    names.append(Path(entry.path))
    with _lock:
        _names[key] = (time.monotonic(), names)
    return names

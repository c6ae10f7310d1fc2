"""Reading a workspace for a checkpoint without ever leaving it.

The workspace is writable by approved commands, and a background process may still run while Orkas reads it: a
folder swapped for a link to the home folder must not be followed, or a checkpoint would copy ~/.ssh into the
store and a rewind would write it back where the model can read it. So, as the file tools do (sandbox/pinned.py),
every folder is opened relative to its parent with O_NOFOLLOW | O_DIRECTORY and listed through its descriptor,
and every file is opened the same way with O_NOFOLLOW: a link is recorded as a link (its target's text), never read
through. Incremental: a file whose size, change time (ctime: no command can set it back, as `touch -d` sets a
modification time), inode and mode are those of the last checkpoint keeps its hash unread — unless it changed within
the last two seconds, where a same-size rewrite could share a time stamp.

What .gitignore leaves out is left out — but never a path the last checkpoint kept (a model's `echo '*' >
.gitignore` cannot take the workspace out of its own checkpoints), and a rewind reads the workspace by the rules
the checkpoint it goes back to had (`rules_from`), so what was hidden since is seen, kept for the undo, and deleted.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from orkas.engine.checkpoints.ignore import Rules, ignored, parse

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
RACY_NS = 2_000_000_000

# An entry: (kind, mode, size, ctime_ns, inode, content) — kind "f" a file (content: its sha256), "l" a link (its
# target's text), "d" a folder, "s" a file left out (too big, or past the checkpoint's cap).
Entry = tuple[str, int, int, int, int, str]


@dataclass(frozen=True, slots=True)
class Limits:
    max_file: int = 20 * 1024 * 1024  # a bigger file is listed, not kept: a rewind says it cannot restore it
    max_new_bytes: int = 512 * 1024 * 1024  # new content one checkpoint may store
    max_entries: int = 100_000  # a workspace this big is kept in part, and says so
    racy_ns: int = RACY_NS  # a file changed this recently is read again, whatever its stat says


@dataclass(slots=True)
class Scan:
    entries: dict[str, Entry] = field(default_factory=dict)
    new_bytes: int = 0
    hashed: int = 0
    truncated: bool = False  # stopped at max_entries


def scan(
    root_fd: int,
    previous: dict[str, Entry],
    keep: Callable[[str, bytes], None],
    limits: Limits | None = None,
    skip: frozenset[str] = frozenset(),
    rules_from: Callable[[str], str] | None = None,
) -> Scan:
    """Every entry under the folder `root_fd` (not ignored), hashing what changed and handing its bytes to `keep`.
    `skip`: paths (from the root) never read — Orkas's own data folder, when the workspace holds it."""
    found = Scan()
    limits = limits or Limits()
    now = time.time_ns()
    stack: list[tuple[int, str, list[Rules]]] = [(os.dup(root_fd), "", [])]
    try:
        while stack:
            fd, rel, rules = stack.pop()
            try:
                rules = _with_ignore_file(fd, rel, rules, rules_from)
                with os.scandir(fd) as listing:
                    listed = list(listing)
                for entry in listed:
                    name = entry.name
                    if len(found.entries) >= limits.max_entries:
                        found.truncated = True
                        return found
                    path = f"{rel}/{name}" if rel else name
                    if path in skip:
                        continue
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    mode = info.st_mode
                    kept = path in previous  # tracked before: tracked still, whatever .gitignore says now
                    if stat.S_ISDIR(mode):
                        if not kept and ignored(rules, path, name, True):
                            continue
                        try:
                            child = os.open(name, DIR_FLAGS, dir_fd=fd)
                        except OSError:
                            continue  # swapped for a link or gone since it was listed: not followed
                        found.entries[path] = ("d", stat.S_IMODE(mode), 0, 0, 0, "")
                        stack.append((child, path, rules))
                    elif not kept and name != ".gitignore" and ignored(rules, path, name, False):
                        continue  # an ignore file is always kept: a rewind reads the folder by its rules then
                    elif stat.S_ISLNK(mode):
                        try:
                            target = os.readlink(name, dir_fd=fd)
                        except OSError:
                            continue
                        found.entries[path] = ("l", 0o777, 0, 0, 0, target)
                    elif stat.S_ISREG(mode):
                        found.entries[path] = _file(fd, name, info, previous.get(path), now, keep, found, limits)
            finally:
                os.close(fd)
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    return found


def _file(
    fd: int,
    name: str,
    info: os.stat_result,
    before: Entry | None,
    now: int,
    keep: Callable[[str, bytes], None],
    found: Scan,
    limits: Limits,
) -> Entry:
    mode, size = stat.S_IMODE(info.st_mode), info.st_size
    same = (
        before is not None
        and before[0] == "f"
        and before[1:5] == (mode, size, info.st_ctime_ns, info.st_ino)
        and now - info.st_ctime_ns > limits.racy_ns
    )
    if same:
        assert before is not None
        return before
    if size > limits.max_file or found.new_bytes + size > limits.max_new_bytes:
        return ("s", mode, size, info.st_ctime_ns, info.st_ino, "")
    try:
        file = os.open(name, FILE_FLAGS, dir_fd=fd)
    except OSError:
        return ("s", mode, size, info.st_ctime_ns, info.st_ino, "")
    try:
        opened = os.fstat(file)
        if not stat.S_ISREG(opened.st_mode):  # swapped since it was listed
            return ("s", mode, size, info.st_ctime_ns, info.st_ino, "")
        chunks = []
        while chunk := os.read(file, 1 << 20):
            chunks.append(chunk)
        data = b"".join(chunks)
    finally:
        os.close(file)
    digest = hashlib.sha256(data).hexdigest()
    keep(digest, data)
    found.new_bytes += len(data)
    found.hashed += 1
    return ("f", stat.S_IMODE(opened.st_mode), len(data), opened.st_ctime_ns, opened.st_ino, digest)


def _with_ignore_file(
    fd: int, rel: str, rules: list[Rules], rules_from: Callable[[str], str] | None = None
) -> list[Rules]:
    """The rules in force in this folder: its parents', then its own .gitignore (and the repository's exclude) — as
    on disk, or as `rules_from` gives a .gitignore's text by its path (a checkpoint's)."""
    added = []
    for name in (".gitignore",) if rel else (".gitignore", ".git/info/exclude"):
        if rules_from is not None and name == ".gitignore":
            text = rules_from(f"{rel}/{name}" if rel else name)
        else:
            text = _small_text(fd, name)
        if text:
            added.append(parse(text, rel))
    return [*rules, *added] if added else rules


def _small_text(fd: int, name: str) -> str:
    parts = name.split("/")
    opened: list[int] = []
    try:
        folder = fd
        for part in parts[:-1]:
            folder = os.open(part, DIR_FLAGS, dir_fd=folder)
            opened.append(folder)
        file = os.open(parts[-1], FILE_FLAGS, dir_fd=folder)
        try:
            if not stat.S_ISREG(os.fstat(file).st_mode):
                return ""
            return os.read(file, 256 * 1024).decode("utf-8", errors="replace")
        finally:
            os.close(file)
    except OSError:
        return ""
    finally:
        for f in opened:
            os.close(f)

"""The person's secrets in the workspace, hidden from every command they did not approve with them in view.

The classifier asks before a command that names a secret (`cat .env`), but a secret can be reached by names
no rule foresees: a glob (`cat .e*`), a recursive read (`grep -r KEY .`, `find . -exec cat {} +`), a loop
over `.*`, a hard link made earlier under an innocent name. So the structure decides, not the spelling: the
sandbox shows each such file as empty (`/dev/null` bound over it) to every command whose approval did not
include "secrets" — the person saw that word on the card — and what a secret file holds is cut out of such a
command's output wherever it appears (a `.env` committed to git comes back through `git log -p`).

Which files: names that say they hold keys or passwords (`verdict.is_secret`: `.env*`, `id_rsa`, `*.pem`,
`credentials.json`, files in a `secrets/` folder…) and every other name (hard link) of one of them. The scan
walks the roots with folder descriptors and never follows a link (the sandbox can write the workspace); it
searches dependency folders and `.git` too (checked for changes less often), stops at BUDGET entries (then
every command asks), and is kept until a folder it walked changes (its inode or ctime: adding, removing or
renaming a file changes its folder's, and no command can set a ctime back).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from orkas.engine.sandbox.verdict import is_secret

BUDGET = 1_000_000  # directory entries per scan (names only: about a second)
MAX_MASKED = 2_000  # mounts that hide secrets per command (three bubblewrap arguments each; it takes ~9,000)
MANY_IN_ONE_FOLDER = 16  # secrets in one folder from which the folder is hidden whole
MAX_PATH = 3_500  # longer paths bubblewrap cannot mount over
HEAVY_TTL = 30.0  # seconds between checks of the dependency folders when nothing wrote
READ_LIMIT = 64 * 1024  # bytes of one secret file read for its values
HEAVY = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache"})
HEAVY |= {".ruff_cache", ".gradle", ".terraform", "site-packages", "bower_components", ".yarn", ".pnpm-store"}
ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?[\w.\-]+\s*[=:]\s*(.+?)\s*,?\s*$")
QUOTED = re.compile(r"""["']([^"'\s]{8,})["']""")
PEM_LINE = re.compile(r"^[A-Za-z0-9+/=]{16,}$")
BARE = re.compile(r"^[\w+/.~!@#$%^&*-]{8,}$")  # no = or : (an assignment is read above)
URL_PASSWORD = re.compile(r"://[^/\s:@]+:([^@/\s]+)@")  # https://user:token@host in a remote's url
AUTH_HEADER = re.compile(r"extraheader\s*=\s*\S+:\s*(?:basic|bearer|token)\s+(\S+)", re.IGNORECASE)
WORDS = re.compile(r"^[A-Za-z]+([_.-][A-Za-z]+)*$")  # client_secret, Content-Type: names, not values
PLAIN_URL = re.compile(r"^[a-z][a-z0-9+.-]*://[^@/\s]+(/\S*)?$")  # no user:password@ in it


@dataclass(frozen=True, slots=True)
class Secrets:
    files: tuple[Path, ...] = ()  # to show as unreadable
    folders: tuple[Path, ...] = ()  # to show as empty: a folder holding many secrets is hidden whole
    values: dict[str, str] = field(default_factory=dict)  # a value → the name of the file it came from
    complete: bool = True  # False when the scan ran out of budget
    shown: bool = False  # the person approved the command with its secrets in view: nothing is hidden

    def redact(self, text: str) -> str:
        """`text` with every value of these files replaced by a marker naming the file."""
        if not self.values or not text:
            return text
        pattern = _pattern(tuple(sorted(self.values, key=len, reverse=True)))
        return pattern.sub(lambda m: f"[hidden: a value from {self.values[m.group(0)]}]", text)


_patterns: dict[tuple[str, ...], re.Pattern[str]] = {}


def _pattern(values: tuple[str, ...]) -> re.Pattern[str]:
    found = _patterns.get(values)
    if found is None:
        found = _patterns[values] = re.compile("|".join(re.escape(v) for v in values))
        if len(_patterns) > 64:
            _patterns.pop(next(iter(_patterns)))
    return found


def secret_values(text: str) -> list[str]:
    """What in a secret file's text looks like a secret: assigned values, quoted strings, a key's body lines.
    Plain words, numbers, paths and URLs without a password are left (they are in ordinary output too)."""
    found: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "//", ";", "-----")):
            continue
        candidates = [m.group(1) for m in QUOTED.finditer(line)]
        assigned = ASSIGNMENT.match(line)
        if assigned:
            candidates.append(assigned.group(1).strip().strip("'\""))
        if PEM_LINE.match(line) or BARE.match(line):  # a key's body, or a token alone on its line
            candidates.append(line)
        found += [c for c in dict.fromkeys(candidates) if _looks_secret(c) and c not in found]
    return found


def _looks_secret(value: str) -> bool:
    if len(value) < 8 or value.startswith(("/", "./", "~/")) or PLAIN_URL.match(value) or WORDS.match(value):
        return False
    kinds = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )
    return kinds >= 2 and not value.replace(".", "").replace("_", "").isdigit()


@dataclass
class _Scan:
    folders: dict[str, tuple[int, int]]  # each folder walked → (inode, ctime): no command can set a ctime back
    heavy: dict[str, tuple[int, int]]  # the same, inside dependency and tool folders (node_modules, .git…)
    secrets: Secrets
    checked: float = field(default_factory=time.monotonic)  # when `heavy` was last checked


class SecretFiles:
    """The secrets under a set of roots, rescanned when a folder in them changed (or was replaced).

    Every folder is searched, dependency folders too (a secret moved into node_modules is still a secret), but
    checking thousands of dependency folders before every command would cost more than the command: they are
    checked when something could have written there — a writable command ran or is running, a file tool wrote
    (`touched`) — and at least every HEAVY_TTL seconds; the others before every command."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scans: dict[tuple[str, ...], _Scan] = {}
        self._dirty: set[tuple[str, ...]] = set()
        self._writers: dict[tuple[str, ...], int] = {}

    def find(self, roots: tuple[Path, ...]) -> Secrets:
        key = tuple(str(r) for r in roots)
        with self._lock:
            known = self._scans.get(key)
            full = key in self._dirty or self._writers.get(key, 0) > 0
            self._dirty.discard(key)
        if known is not None and _unchanged(known.folders):
            if not (full or time.monotonic() - known.checked > HEAVY_TTL):
                return known.secrets
            if _unchanged(known.heavy):
                known.checked = time.monotonic()
                return known.secrets
        scan = _scan(roots)
        with self._lock:
            self._scans[key] = scan
        return scan.secrets

    def touched(self, roots: tuple[Path, ...]) -> None:
        """Something may have written under these roots: check every folder next time."""
        with self._lock:
            self._dirty.add(tuple(str(r) for r in roots))

    def writing(self, roots: tuple[Path, ...], delta: int) -> None:
        """A writable command under these roots started (+1) or ended (-1): while one runs, check every folder."""
        key = tuple(str(r) for r in roots)
        with self._lock:
            self._writers[key] = max(0, self._writers.get(key, 0) + delta)
            self._dirty.add(key)


def _unchanged(folders: dict[str, tuple[int, int]]) -> bool:
    try:
        for path, seen in folders.items():
            info = os.stat(path, follow_symlinks=False)
            if (info.st_ino, info.st_ctime_ns) != seen:
                return False
        return True
    except OSError:
        return False


def _entries(root: Path, *, skip: frozenset[str]) -> Iterator[tuple[str, int, os.DirEntry[str] | None]]:
    """(folder, its descriptor, entry) for every entry under `root`; each folder once with entry None first.
    Folders are opened relative to their parent without following a link, and only when their turn comes: a
    parent's descriptor stays open until its last subfolder is opened, so a wide tree never holds many."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    stack: list[tuple[str, list[int] | None, str]] = [(str(root), None, str(root))]
    holders: list[list[int]] = []

    def release(holder: list[int]) -> None:
        holder[1] -= 1
        if holder[1] == 0:
            os.close(holder[0])

    try:
        while stack:
            folder, parent, name = stack.pop()
            try:
                fd = os.open(name, flags, dir_fd=parent[0]) if parent is not None else os.open(name, flags)
            except OSError:
                continue
            finally:
                if parent is not None:
                    release(parent)
            holder = [fd, 1]  # the descriptor, and who still needs it: this listing, then each pending subfolder
            holders.append(holder)
            try:
                yield folder, fd, None
                with os.scandir(fd) as listing:
                    entries = list(listing)
                for entry in entries:
                    yield folder, fd, entry
                    if entry.is_dir(follow_symlinks=False) and entry.name not in skip:
                        holder[1] += 1
                        stack.append((f"{folder}/{entry.name}", holder, entry.name))
            except OSError:
                continue
            finally:
                release(holder)
    finally:
        for holder in holders:
            if holder[1] > 0:
                holder[1] = 0
                with contextlib.suppress(OSError):
                    os.close(holder[0])


def _scan(roots: tuple[Path, ...]) -> _Scan:
    """Names only, but for the few named like secrets (stat, read): a folder of a million files costs a listing.
    A secret with other names (hard links) is then looked for by inode everywhere."""
    folders: dict[str, tuple[int, int]] = {}
    heavy: dict[str, tuple[int, int]] = {}
    named: list[tuple[Path, os.stat_result]] = []
    values: dict[str, str] = {}
    budget = BUDGET
    complete = True
    for root in roots:
        prefix = len(str(root)) + 1
        for folder, fd, entry in _entries(root, skip=frozenset()):
            if entry is None:
                with contextlib.suppress(OSError):
                    info = os.fstat(fd)
                    inside = set(folder[prefix:].split("/")) & HEAVY
                    (heavy if inside else folders)[folder] = (info.st_ino, info.st_ctime_ns)
                continue
            budget -= 1
            if budget < 0:
                complete = False
                break
            if entry.is_dir(follow_symlinks=False) or not is_secret(f"{folder}/{entry.name}"[prefix:]):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and _holds_secrets(entry.name, fd, entry.name, values):
                named.append((Path(folder) / entry.name, info))
    for root in roots:
        _repository_credentials(root, values)
    hidden = {path for path, _ in named}
    linked = {(info.st_dev, info.st_ino) for _, info in named if info.st_nlink > 1}
    if linked:
        others, searched = _other_names(roots, linked)
        hidden |= others
        complete = complete and searched
    files, whole, fits = _masks(hidden)
    return _Scan(folders, heavy, Secrets(files, whole, values, complete and fits))


def _masks(hidden: set[Path]) -> tuple[tuple[Path, ...], tuple[Path, ...], bool]:
    """The mounts that hide these files: one per file, or one per folder holding many (bubblewrap takes at most
    ~9,000 arguments, and a path it cannot create). False when they do not fit (the caller fails closed)."""
    by_folder: dict[Path, list[Path]] = {}
    for path in hidden:
        by_folder.setdefault(path.parent, []).append(path)
    files: list[Path] = []
    whole: list[Path] = []
    for folder, inside in sorted(by_folder.items()):
        if len(inside) >= MANY_IN_ONE_FOLDER:
            whole.append(folder)
        else:
            files += sorted(inside)
    fits = len(files) + len(whole) <= MAX_MASKED and all(len(str(p)) < MAX_PATH for p in [*files, *whole])
    return tuple(files), tuple(whole), fits


def _other_names(roots: tuple[Path, ...], inodes: set[tuple[int, int]]) -> tuple[set[Path], bool]:
    """Every name under the roots of these files, `.git` and dependency folders included; False when the
    search ran out of budget (some names may be missing)."""
    found: set[Path] = set()
    budget = BUDGET
    for root in roots:
        for folder, _fd, entry in _entries(root, skip=frozenset()):
            if entry is None:
                continue
            budget -= 1
            if budget < 0:
                return found, False
            if entry.is_file(follow_symlinks=False) and any(entry.inode() == ino for _dev, ino in inodes):
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    if (info.st_dev, info.st_ino) in inodes:
                        found.add(Path(folder) / entry.name)
    return found, True


def _repository_credentials(root: Path, values: dict[str, str]) -> None:
    """A token in the repository's own configuration (a remote's url, an auth header) is cut from output too:
    git needs the file, so it is not hidden, but `git remote -v` must not show the token."""
    try:
        folder = os.open(root / ".git", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        fd = os.open("config", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except OSError:
        return
    finally:
        os.close(folder)
    try:
        text = os.read(fd, READ_LIMIT).decode("utf-8", errors="replace") if stat.S_ISREG(os.fstat(fd).st_mode) else ""
    except OSError:
        text = ""
    finally:
        os.close(fd)
    for pattern in (URL_PASSWORD, AUTH_HEADER):
        for match in pattern.finditer(text):
            if len(match.group(1)) >= 6:
                values.setdefault(match.group(1), ".git/config")


def _holds_secrets(name: str, folder: int, shown: str, values: dict[str, str]) -> bool:
    """Note the values of a file named like a secret; False for a certificate file with no private key in it
    (a CA bundle, a server's public certificate: `*.pem` names both)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except OSError:
        return True  # unreadable here: hide it all the same
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return True
        data = os.read(fd, READ_LIMIT)
    except OSError:
        return True
    finally:
        os.close(fd)
    text = data.decode("utf-8", errors="replace")
    if name.lower().endswith((".pem", ".crt", ".cer")) and "PRIVATE KEY" not in text and "-----BEGIN" in text:
        return False
    for value in secret_values(text):
        values.setdefault(value, shown)
    return True


SECRETS = SecretFiles()  # one for the process: every executor of a workspace shares its scan

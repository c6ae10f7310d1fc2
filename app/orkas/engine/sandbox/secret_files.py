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
skips `.git` and dependency folders, stops at BUDGET entries, and is kept until a folder it walked changes
(its mtime): adding, removing or renaming a file changes its folder's.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path

from orkas.engine.sandbox.verdict import is_secret

BUDGET = 100_000  # directory entries per scan
MAX_MASKED = 400  # files shown as empty per command (each is one mount)
READ_LIMIT = 64 * 1024  # bytes of one secret file read for its values
SKIP = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache"})
SKIP |= {".ruff_cache", ".gradle", ".terraform", "site-packages", "bower_components", ".yarn", ".pnpm-store"}
ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?[\w.\-]+\s*[=:]\s*(.+?)\s*,?\s*$")
QUOTED = re.compile(r"""["']([^"'\s]{8,})["']""")
PEM_LINE = re.compile(r"^[A-Za-z0-9+/=]{16,}$")
WORDS = re.compile(r"^[A-Za-z]+([_.-][A-Za-z]+)*$")  # client_secret, Content-Type: names, not values
PLAIN_URL = re.compile(r"^[a-z][a-z0-9+.-]*://[^@/\s]+(/\S*)?$")  # no user:password@ in it


@dataclass(frozen=True, slots=True)
class Secrets:
    files: tuple[Path, ...] = ()  # to show as empty
    values: dict[str, str] = field(default_factory=dict)  # a value → the name of the file it came from
    complete: bool = True  # False when the scan ran out of budget

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
        if PEM_LINE.match(line):
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
    folders: dict[str, int]  # each folder walked → its mtime
    secrets: Secrets


class SecretFiles:
    """The secrets under a set of roots, rescanned only when a folder in them changed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scans: dict[tuple[str, ...], _Scan] = {}

    def find(self, roots: tuple[Path, ...]) -> Secrets:
        key = tuple(str(r) for r in roots)
        with self._lock:
            known = self._scans.get(key)
        if known is not None and _unchanged(known.folders):
            return known.secrets
        scan = _scan(roots)
        with self._lock:
            self._scans[key] = scan
        return scan.secrets


def _unchanged(folders: dict[str, int]) -> bool:
    try:
        return all(os.stat(path, follow_symlinks=False).st_mtime_ns == mtime for path, mtime in folders.items())
    except OSError:
        return False


def _scan(roots: tuple[Path, ...]) -> _Scan:
    folders: dict[str, int] = {}
    named: list[tuple[Path, os.stat_result]] = []
    linked: dict[tuple[int, int], list[Path]] = {}  # multiply-linked regular files by inode
    budget = BUDGET
    values: dict[str, str] = {}
    complete = True
    for root in roots:
        if not root.is_dir():
            continue
        try:
            walk = os.fwalk(root, follow_symlinks=False)
            for folder, dirs, names, fd in walk:
                try:
                    folders[folder] = os.stat(fd).st_mtime_ns
                except OSError:
                    continue
                dirs[:] = [d for d in dirs if d not in SKIP]
                budget -= len(dirs) + len(names)
                if budget < 0:
                    complete = False
                    break
                for name in names:
                    try:
                        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except OSError:
                        continue
                    if not stat.S_ISREG(info.st_mode):
                        continue
                    path = Path(folder) / name
                    if is_secret(str(path.relative_to(root))) and _holds_secrets(name, fd, path.name, values):
                        named.append((path, info))
                    if info.st_nlink > 1:
                        linked.setdefault((info.st_dev, info.st_ino), []).append(path)
        except OSError:
            continue
    hidden = {path for path, _ in named}
    for _path, info in named:  # the other names of a secret file
        hidden.update(linked.get((info.st_dev, info.st_ino), []))
    shown_empty = tuple(sorted(hidden))[:MAX_MASKED]
    return _Scan(folders, Secrets(shown_empty, values, complete and len(hidden) <= MAX_MASKED))


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

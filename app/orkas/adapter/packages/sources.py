"""What an external package is before Orkas keeps it: its source (refused with the reason unless https,
ssh or a local folder), its name, whether any symbolic link or too much is in it, and its kind — skills,
commands, both — with the commands' entries and the dependency manager it would need."""

from __future__ import annotations

import json
import os
import re
import stat
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from orkas.core.errors import ConfigError

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,47}\Z")
MAX_BYTES = 500 * 1024 * 1024  # a package larger than this is refused
MAX_FILES = 50_000
ARCHIVES = (".zip", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".7z", ".rar", ".html", ".htm", ".whl")
SKILL_PLACES = (".", "skills/*", ".claude/skills/*")
Kind = Literal["skill", "cli", "both"]
Runtime = Literal["python", "node", "sh"]


class PackageError(ConfigError):
    """A package that cannot be installed, updated or used; the message says why."""


@dataclass(slots=True)
class Entry:
    name: str  # the command's name on PATH
    target: str  # python: "module:function"; node and sh: a path inside the package
    runtime: Runtime


@dataclass(slots=True)
class Package:
    name: str
    source: str
    commit: str = ""
    kind: Kind = "skill"
    skill_roots: list[str] = field(default_factory=list)  # relative: "." or "skills/pdf"
    entries: list[Entry] = field(default_factory=list)
    deps: str | None = None  # what would install its dependencies ("pip", "npm"), None when nothing
    deps_consent: bool | None = None  # None: not asked yet
    enabled: bool = True
    installed_at: str = ""
    updated_at: str = ""

    def public(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Source:
    text: str
    kind: Literal["https", "ssh", "local"]
    clone_url: str  # what git is given
    local: Path | None = None


def check_source(text: str) -> Source:
    """What kind of source `text` is, or PackageError saying why it is refused."""
    raw = text.strip()
    if not raw or any(c in raw for c in "\0\n\r") or raw.startswith("-"):
        raise PackageError("give a git URL (https://, ssh://, git@host:path) or a local folder")
    lowered = raw.lower()
    if "::" in raw.split("/", 1)[0] or lowered.startswith(("ext::", "fd::")):
        raise PackageError(
            f"{raw!r}: git transports like ext:: and fd:: run commands; only https, ssh and local folders"
        )
    if lowered.startswith("http://"):
        raise PackageError(f"{raw!r}: plain http is not accepted; use https://")
    if lowered.startswith(("https://", "ssh://")):
        parts = urlsplit(raw)
        if parts.username or parts.password or ("@" in parts.netloc and lowered.startswith("https://")):
            raise PackageError(f"{raw!r}: the URL carries credentials; they would be stored with the package")
        if parts.query or parts.fragment or parts.path.lower().endswith(ARCHIVES):
            raise PackageError(f"{raw!r}: this looks like a file or a web page, not a git repository")
        if not parts.hostname:
            raise PackageError(f"{raw!r}: the URL has no host")
        return Source(raw, "https" if lowered.startswith("https://") else "ssh", raw)
    if re.match(r"^[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:[^/]", raw) and "://" not in raw:
        return Source(raw, "ssh", raw)
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", raw) or raw.startswith("file:"):
        raise PackageError(f"{raw!r}: only https://, ssh://, git@host:path or a local folder")
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        raise PackageError(f"{raw!r}: give a local folder as a full path")
    if not path.is_dir():
        raise PackageError(f"{raw!r} is not a folder")
    return Source(raw, "local", path.resolve().as_uri(), local=path.resolve())


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise PackageError(f"package name {name!r}: use 1-48 lowercase letters, digits, - or _")
    return name


def name_from(source: Source) -> str:
    tail = source.text.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")
    slug = re.sub(r"[^a-z0-9_-]+", "-", tail.lower()).strip("-_")[:48]
    return check_name(slug or "package")


# ---- what a package is ----
def refuse_links(root: Path) -> None:
    """Any symbolic link in the tree (.git included) refuses the package; so do too many files or bytes."""
    total, files = 0, 0
    for folder, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = Path(folder) / name
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                raise PackageError(
                    f"it contains a symbolic link ({path.relative_to(root)}), which could lead outside it"
                )
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
                files += 1
        if total > MAX_BYTES or files > MAX_FILES:
            raise PackageError(f"it is larger than {MAX_BYTES // 1024 // 1024} MB or {MAX_FILES:,} files")


def detect(root: Path, name: str) -> tuple[Kind, list[str], list[Entry], str | None]:
    """Skill roots, command entries and dependency manager of a package; PackageError when neither kind."""
    roots: list[str] = []
    if (root / "SKILL.md").is_file():
        roots.append(".")
    for place in ("skills", ".claude/skills"):
        found = sorted(p.parent for p in (root / place).glob("*/SKILL.md") if p.is_file())
        roots += [p.relative_to(root).as_posix() for p in found]
    entries = _python_entries(root) + _node_entries(root, name)
    if not roots and not entries:
        raise PackageError(
            "it is neither a skill package (SKILL.md at its top, in skills/*/ or .claude/skills/*/) nor a command "
            "package ([project.scripts] in pyproject.toml, or bin in package.json)"
        )
    kind: Kind = "both" if roots and entries else "skill" if roots else "cli"
    deps = None
    if (root / "package.json").is_file() and (root / "package-lock.json").is_file():
        deps = "npm"
    elif (root / "requirements.txt").is_file() or (root / "pyproject.toml").is_file():
        deps = "pip"
    return kind, roots, entries, deps


def _python_entries(root: Path) -> list[Entry]:
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    scripts = data.get("project", {}).get("scripts", {})
    if not isinstance(scripts, dict):
        return []
    entries = []
    for command, target in scripts.items():
        if (
            isinstance(target, str)
            and re.match(r"^[A-Za-z0-9_-]{1,64}$", command)
            and re.match(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$", target.strip())
        ):
            entries.append(Entry(command, target.strip(), "python"))
    return entries


def _node_entries(root: Path, name: str) -> list[Entry]:
    try:
        data = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict):
        return []
    binaries = data.get("bin")
    if isinstance(binaries, str):
        binaries = {str(data.get("name") or name).rsplit("/", 1)[-1]: binaries}
    if not isinstance(binaries, dict):
        return []
    entries = []
    for command, target in binaries.items():
        relative = Path(str(target))
        if (
            re.match(r"^[A-Za-z0-9_-]{1,64}$", str(command))
            and not relative.is_absolute()
            and ".." not in relative.parts
        ):
            entries.append(Entry(str(command), relative.as_posix(), "node"))
    return entries

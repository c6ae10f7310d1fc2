"""The vocabulary of command risk: levels, categories, where a path points, and the verdict being built.

Levels, from least to most: `read_only` (runs without asking), `workspace_write` (changes files in
the workspace), `runs_program` (runs something not known to be read-only — confined, it can do
little harm), `dangerous` (would leave the sandbox: network, places outside the workspace,
privilege, the person's keys, the machine's processes, or wholesale destruction of the workspace).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Literal

from orkas.engine.sandbox.confine import ETC_SECRETS

Level = Literal["read_only", "workspace_write", "runs_program", "dangerous"]
Category = Literal[
    "writes",
    "deletes",
    "runs_program",
    "code_execution",
    "network",
    "package_install",
    "outside_workspace",
    "privilege",
    "credentials",
    "process_control",
    "destructive",
    "secrets",
]
LEVELS: tuple[Level, ...] = ("read_only", "workspace_write", "runs_program", "dangerous")
LEVEL_OF: dict[Category, Level] = {
    "writes": "workspace_write",
    "deletes": "workspace_write",
    "runs_program": "runs_program",
    "code_execution": "runs_program",
    "network": "dangerous",
    "package_install": "dangerous",
    "outside_workspace": "dangerous",
    "privilege": "dangerous",
    "credentials": "dangerous",
    "process_control": "dangerous",
    "destructive": "dangerous",
    "secrets": "dangerous",  # the text goes to the model, and so off the machine: the person sees it asked
}
# Approving these lets a command use the network (still confined); approving the others runs it unconfined.
NEEDS_NETWORK = frozenset({"network", "package_install"})
NEEDS_UNCONFINED = frozenset({"outside_workspace", "privilege", "credentials", "process_control"})

Place = Literal["inside", "scratch", "system", "root", "home", "outside", "device", "network_device", "dynamic"]
SYSTEM_PREFIXES: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
SYSTEM_PREFIXES += ("/sys", "/proc", "/nix", "/snap", "/System", "/Library/Frameworks")
HARMLESS_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/random", "/dev/urandom", "/dev/tty"}
)
SCRATCH_PREFIXES = ("/tmp/", "/var/tmp/", "/dev/fd/", "/dev/shm/", "/proc/self/")


# Files that usually hold passwords or keys, by name: reading one is asked about, not done silently.
SECRET_NAME = re.compile(
    r"^(\.env([._~ -].*)?|.+\.env|\.envrc|\.netrc|\.npmrc|\.pypirc|\.git-credentials|\.htpasswd|htpasswd|credentials"
    r"|\.pgpass|\.my\.cnf|\.vault-token|kubeconfig|tokens?\.(txt|json)|\.dockercfg"
    r"|credentials\.(json|ya?ml|toml|ini|csv)|secrets?\.(json|ya?ml|toml|ini|env|txt)|service[-_]?account.*\.json"
    r"|id_(rsa|dsa|ecdsa|ed25519)(_[\w-]+)?|.+\.(pem|key|p12|pfx|jks|keystore|ppk|kdbx|tfvars|age|tfstate)"
    r"|.+\.tfstate\.backup"
    r"|(.*[-_.])?(service[-_]?account|credentials?|secrets?|private[-_]?key|api[-_]?keys?)([-_.].*)?"
    r"\.(json|ya?ml|toml|ini|txt|env|conf|cfg|properties|csv|xml))$",
    re.IGNORECASE,
)
NOT_SECRET = re.compile(r"\.(example|sample|template|dist|defaults?|schema|md|pub)$", re.IGNORECASE)
SECRET_FOLDER = re.compile(
    r"(^|/)(secrets?|credentials|private|\.secrets)(~|[._-](bak|old|orig|backup|copy|prev)\d*)?/", re.IGNORECASE
)
SECRET_PATH = re.compile(r"(^|/)(\.kube/config|\.docker/config\.json|\.ssh/[^/]+|\.aws/(credentials|config))$")
# A copy of a file holds what the file held: id_rsa~, .env.bak, ".env (copy)", "id_ed25519 (1)", "#.env#", ".#.env"
BACKUP = re.compile(
    r"(~|\.(bak|old|orig|backup|save|swp|tmp|copy|prev)\d*| \(?(copy|\d+)\)?| copy( \d+)?)$", re.IGNORECASE
)
EDITOR_COPY = re.compile(r"^(#(.+)#|\.#(.+))$")


def is_secret(path: str) -> bool:
    """Does this path's name (a glob or a brace expansion too: `.env*`, `.env{,.local}`; a git object `HEAD:.env`)
    say it holds passwords or keys?"""
    brace = re.search(r"\{([^{}]*)\}", path)
    if brace is not None:
        return any(is_secret(path[: brace.start()] + part + path[brace.end() :]) for part in brace.group(1).split(","))
    name = path.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    while BACKUP.search(name) and BACKUP.sub("", name):  # a backup copy holds what the original held
        name = BACKUP.sub("", name)
    copy = EDITOR_COPY.match(name)
    if copy:
        name = copy.group(2) or copy.group(3)
    if SECRET_PATH.search(path.rsplit(":", 1)[-1].rstrip("/")):
        return True
    if NOT_SECRET.search(name):
        return False
    if SECRET_FOLDER.search(path.rsplit(":", 1)[-1]) and not (
        name.endswith(".md") or name.upper().startswith("README")
    ):
        return True
    if any(c in name for c in "*?["):  # a glob: does some name it matches look like a secret?
        for filler in ("", "x", "rsa"):
            candidate = re.sub(r"[*?]|\[[^\]]*\]", filler, name)
            if candidate and (SECRET_NAME.match(candidate) is not None or candidate.lower() in (".env", ".env.")):
                return True
        return False
    return SECRET_NAME.match(name) is not None


@dataclass(frozen=True, slots=True)
class CommandRisk:
    level: Level
    categories: tuple[Category, ...]
    reason: str
    signature: str = ""  # the command's parsed shape: what an "always allow" rule names

    @property
    def network(self) -> bool:
        """Approving this command turns the network on for it."""
        return any(c in NEEDS_NETWORK for c in self.categories)

    @property
    def unconfined(self) -> bool:
        """Approving this command runs it outside the sandbox (it needs places or rights the sandbox hides)."""
        return any(c in NEEDS_UNCONFINED for c in self.categories)


@dataclass(slots=True)
class Verdict:
    categories: list[Category] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def add(self, category: Category, reason: str) -> None:
        if category not in self.categories:
            self.categories.append(category)
        if reason not in self.reasons:
            self.reasons.append(reason)

    @property
    def level(self) -> Level:
        levels = [LEVELS.index(LEVEL_OF[c]) for c in self.categories]
        return LEVELS[max(levels)] if levels else "read_only"

    def risk(self, signature: str) -> CommandRisk:
        level = self.level
        ordered = sorted(self.categories, key=lambda c: -LEVELS.index(LEVEL_OF[c]))
        reasons = list(self.reasons) or ["only reads"]
        return CommandRisk(level, tuple(ordered), "; ".join(reasons), signature)


@dataclass(slots=True)
class Context:
    """What the walk knows while it judges a line: where `cd` went, which variables hold what."""

    workspace: PurePosixPath | None = None  # absolute paths inside it (or `roots`) are inside
    roots: tuple[PurePosixPath, ...] = ()
    cwd: PurePosixPath | None = field(default_factory=lambda: PurePosixPath("."))  # None: left the workspace
    variables: dict[str, list[str]] = field(default_factory=dict)
    tainted: set[str] = field(default_factory=set)  # variables that hold text computed at run time
    loop_tainted: set[str] = field(default_factory=set)  # …each time round a loop over computed values
    integers: set[str] = field(default_factory=set)  # declared -i: every value assigned is evaluated as arithmetic
    functions: set[str] = field(default_factory=set)
    package_commands: frozenset[str] = frozenset()  # names only an installed package provides
    depth: int = 0


def place(text: str, ctx: Context, *, dynamic: bool = False) -> Place:
    """Where a path argument points, as far as can be told before the command runs."""
    for value in expand(text, ctx) if dynamic else [text]:
        found = _place_literal(value, ctx)
        if found != "inside":
            return found
    return "inside"


def expand(text: str, ctx: Context) -> list[str]:
    """The values a word with variables may take: known variables substituted, the rest marked unknown."""
    values = [text]
    for name, options in ctx.variables.items():
        for token in (f"${{{name}}}", f"${name}"):
            if any(token in v for v in values):
                values = [v.replace(token, option) for v in values for option in options or [""]]
    return values


def _place_literal(text: str, ctx: Context) -> Place:
    if text.startswith("~") or "$HOME" in text or "${HOME" in text or "$USER" in text:
        return "home"
    if text.startswith(("$PWD", "${PWD}")):
        return "inside"
    if text.startswith(("$TMPDIR", "${TMPDIR}")):
        return "scratch"
    if "$" in text or "`" in text:
        return "dynamic"
    if len(text) > 2 and text[1] == ":" and text[2] in "\\/":
        return "outside"  # C:\…
    if text.startswith("/"):
        return _absolute(PurePosixPath(posixpath.normpath(text)), ctx)
    if ctx.cwd is None:
        return "outside"
    joined = posixpath.normpath(str(ctx.cwd / text))
    if joined == ".." or joined.startswith("../"):
        return "outside"
    if ctx.cwd.is_absolute():
        return _absolute(PurePosixPath(joined), ctx)
    return "inside"


def _absolute(path: PurePosixPath, ctx: Context) -> Place:
    text = str(path)
    for root in (*([ctx.workspace] if ctx.workspace else []), *ctx.roots):
        if path == root or root in path.parents:
            return "inside"
    if text == "/":
        return "root"
    if text.startswith(("/dev/tcp/", "/dev/udp/")):
        return "network_device"
    if text in HARMLESS_DEVICES or text.startswith(SCRATCH_PREFIXES) or text in ("/tmp", "/var/tmp"):
        return "scratch"
    if text.startswith("/dev"):
        return "device"
    if text.startswith("/etc/") and any(text == f"/etc/{s}" or text.startswith(f"/etc/{s}/") for s in ETC_SECRETS):
        return "outside"  # masked in the sandbox; unconfined, the machine's secrets
    if any(text == p or text.startswith(p + "/") for p in SYSTEM_PREFIXES):
        return "system"
    return "outside"

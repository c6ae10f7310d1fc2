"""What a checkpoint leaves out, as git would: `.gitignore` files (each applying to its folder and below, the last
matching line winning, `!` taking a match back, a trailing `/` for folders only) and `.git/info/exclude`, plus the
folders no workspace wants copied (`.git` itself) — but never a group agent's worktree.

Written for speed rather than borrowed: a checkpoint of an unchanged 10,000-file workspace has 100 ms, so one
`.gitignore`'s lines are joined into one regular expression per kind (names anywhere, paths from its folder) when
none of them takes a match back; only a file with `!` lines is read line by line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ALWAYS = frozenset({".git", ".hg", ".svn", ".jj"})  # a repository's own store: git already keeps it
# A group's agents write in git worktrees under `.orkas/worktrees/<name>`, which Orkas itself hides from git
# (`.git/info/exclude`): kept all the same, so each agent's worktree rewinds with the workspace.
WORKTREES = ".orkas/worktrees"


@dataclass(frozen=True, slots=True)
class Rule:
    regex: re.Pattern[str]
    negate: bool
    folders_only: bool
    anchored: bool  # matched against the path from the rule's folder, else against the name alone


@dataclass(frozen=True, slots=True)
class Rules:
    """One ignore file's lines, for paths under `base` ("" for the workspace's root)."""

    base: str
    rules: tuple[Rule, ...]
    joined: tuple[Rule, ...] = field(default=())  # the same, joined by kind, when no line is negated

    def decide(self, path: str, name: str, is_folder: bool) -> bool | None:
        """True (ignored), False (a `!` line took it back) or None (no line of this file speaks of it)."""
        if self.base and not path.startswith(self.base + "/"):
            return None
        subject = path[len(self.base) + 1 :] if self.base else path
        for rule in reversed(self.joined or self.rules):
            if rule.folders_only and not is_folder:
                continue
            if rule.regex.fullmatch(subject if rule.anchored else name):
                return not rule.negate
        return None


def parse(text: str, base: str) -> Rules:
    rules: list[Rule] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):  # "foo\ " keeps its space
            line = raw.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate or line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        folders_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        rules.append(Rule(re.compile(_translate(line)), negate, folders_only, anchored))
    joined: tuple[Rule, ...] = ()
    if rules and not any(r.negate for r in rules):
        groups: dict[tuple[bool, bool], list[str]] = {}
        for r in rules:
            groups.setdefault((r.folders_only, r.anchored), []).append(r.regex.pattern)
        joined = tuple(
            Rule(re.compile("|".join(f"(?:{p})" for p in patterns)), False, folders, anchored)
            for (folders, anchored), patterns in groups.items()
        )
    return Rules(base, tuple(rules), joined)


def ignored(stack: list[Rules], path: str, name: str, is_folder: bool) -> bool:
    """Whether the ignore files in force (root first) leave `path` out; the nearest file that speaks wins."""
    if is_folder and name in ALWAYS:
        return True
    if is_folder and (path == ".orkas" or path == WORKTREES or path.rpartition("/")[0] == WORKTREES):
        return False
    for rules in reversed(stack):
        said = rules.decide(path, name, is_folder)
        if said is not None:
            return said
    return False


def _translate(pattern: str) -> str:
    """A gitignore glob as a regular expression: `**` crosses folders, `*` and `?` do not, `[…]` is a class."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        elif c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)

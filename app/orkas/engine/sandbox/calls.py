"""One program invocation being judged: its arguments, where they point, and what it runs in turn."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from orkas.engine.sandbox import known
from orkas.engine.sandbox.shell import Command, Word
from orkas.engine.sandbox.verdict import Context, Place, Verdict, expand, is_secret, place

WHOLESALE = frozenset(
    {".", "./", "..", "../", "*", "./*", ".*", "*.*", "/", "/*", "~", "~/", "~/*", "$HOME", "${HOME}"}
)
WHOLESALE |= frozenset({"$PWD", "${PWD}", ".git", "./.git", ".[!.]*", "..?*", "*/", "**", "**/*", "./**", "./**/*"})
# Ways to write the working folder itself, and what after a folder means "everything in it".
HERE = ("$PWD", "${PWD}", "$(pwd)", "`pwd`", "~+", "$(pwd -P)", "${PWD%/}")
EVERYTHING_IN = ("/*", "/.*", "/.[!.]*", "/..?*", "/**", "/**/*", "/*.*", "/", "/.")


def _clustered(word: str, letter: str) -> bool:
    """Is `letter` an option inside a cluster of single-letter flags (`-uo`), not the cluster's first letter?"""
    if not word.startswith("-") or word.startswith("--") or len(word) < 3 or word[1] == letter:
        return False
    at = word.find(letter, 2)
    return at > 0 and word[1:at].isalpha()


def only_wildcards(pattern: str) -> bool:
    """A name pattern made only of wildcards (`*`, `?*`, `[a-z]*`, `[[:alnum:]]*`, `.*`): it names everything."""
    return not re.sub(r"\[(\[:\w+:\]|[^\]])*\]|[*?./]", "", pattern)


def wholesale(word: Word, ctx: Context) -> bool:
    """Does this path mean the whole workspace (or a folder holding it), however written: `.`, `*`, `"$PWD"/*`,
    `$(pwd)/.`, `src/..`, the workspace's absolute path and everything in it, `~`, `/`?"""
    text = word.text
    if text in WHOLESALE or text.rstrip("/") in WHOLESALE:
        return True
    if word.dynamic and "$" in text:  # `d=.; rm -rf "$d"/*`: each value the variables may hold
        values = [v for v in expand(text, ctx) if v != text]
        if any(wholesale(Word(v, glob=word.glob), ctx) for v in values):
            return True
    brace = re.search(r"\{([^{}]*)\}", text)
    if brace is not None:  # `./{*,.[!.]*}`, `{a..z}*`: each alternative, and a range of letters is all of them
        parts = brace.group(1).split(",")
        if re.fullmatch(r"\w\.\.\w", brace.group(1)) and text[brace.end() :].startswith(("*", "?")):
            parts = ["*"]
        return any(
            wholesale(Word(text[: brace.start()] + part + text[brace.end() :], glob=True), ctx) for part in parts
        )
    if word.glob and only_wildcards(text.rsplit("/", 1)[-1]):
        folder = text.rsplit("/", 1)[0] if "/" in text else "."
        return wholesale(Word(folder or "/"), ctx)  # `?*`, `[a-z]*`, `.[a-z]*`: every name in that folder
    for form in HERE:
        if text == form or text.startswith(form + "/"):
            text = "." + text[len(form) :]
            break
    changed = True
    while changed and len(text) > 1:
        changed = False
        for suffix in EVERYTHING_IN:
            if text.endswith(suffix) and len(text) > len(suffix):
                text, changed = text[: -len(suffix)], True
    if text.startswith("~"):
        return text in ("~", "~/")
    normal = posixpath.normpath(text)
    if normal in (".", "..", "/") or normal.startswith("../") or text in ("", "/"):
        return True
    if normal.startswith("/"):
        path = PurePosixPath(normal)
        return any(path == root or path in root.parents for root in (ctx.workspace, *ctx.roots) if root is not None)
    return False


@dataclass
class Call:
    """One program invocation being judged, with ways to judge what it runs in turn."""

    name: str
    args: list[Word]
    command: Command
    ctx: Context
    verdict: Verdict
    judge_words: Callable[[list[Word]], None]  # judge an inner command given as words
    judge_line: Callable[[str], None]  # judge a string the program will run as a shell line

    @property
    def words(self) -> list[str]:
        return [a.text for a in self.args]

    def positionals(self, *, skip_values: frozenset[str] = frozenset()) -> list[Word]:
        """Arguments that are not options (after `--` everything is positional)."""
        out: list[Word] = []
        skip = False
        dashdash = False
        for arg in self.args:
            if skip:
                skip = False
                continue
            if dashdash or not arg.text.startswith("-") or arg.text == "-":
                out.append(arg)
            elif arg.text == "--":
                dashdash = True
            elif arg.text in skip_values:
                skip = True
        return out

    def option_values(self, *names: str) -> list[str]:
        """Values of options given as `-o V`, `-oV`, `--opt V` or `--opt=V` (a long option also by an abbreviation
        getopt would take: `--out=F` is `--output=F`)."""
        found: list[str] = []
        words = self.words
        for i, word in enumerate(words):
            for name in names:
                if (word == name or abbreviates(word, name)) and i + 1 < len(words):
                    found.append(words[i + 1])
                elif name.startswith("--") and "=" in word and (word.startswith(name + "=") or abbreviates(word, name)):
                    found.append(word.split("=", 1)[1])
                elif len(name) == 2 and not name.startswith("--") and word.startswith(name) and len(word) > 2:
                    found.append(word[2:])
                elif len(name) == 2 and _clustered(word, name[1]):  # `-uo F`, `-uoF`: flags, then the option
                    at = word.index(name[1], 1)
                    rest = word[at + 1 :]
                    if rest:
                        found.append(rest)
                    elif i + 1 < len(words):
                        found.append(words[i + 1])
        return found

    def has(self, *flags: str) -> bool:
        """Is any of these options present (also inside a cluster such as `-rf` for `-f`)?"""
        for word in self.words:
            if word in flags:
                return True
            if word.startswith("-") and not word.startswith("--") and len(word) > 2:
                if any(len(f) == 2 and f[1] in word[1:] and not f.startswith("--") for f in flags):
                    return True
            if any(f.startswith("--") and (word.startswith(f + "=") or abbreviates(word, f)) for f in flags):
                return True
        return False

    def where(self, word: Word) -> Place:
        return place(word.text, self.ctx, dynamic=word.dynamic)

    def read(self, word: Word) -> None:
        found = self.where(word)
        if found in ("home", "outside", "device") or (found == "root" and self.name not in known.ROOT_OK):
            self.verdict.add("outside_workspace", f"{self.name} reads {word.text}, outside the workspace")
        elif found == "network_device":
            self.verdict.add("network", f"{self.name} opens a network connection ({word.text})")
        elif self.name not in known.METADATA_READERS and (is_secret(word.text) or WHOLE_ETC.match(word.text)):
            self.verdict.add("secrets", f"{self.name} reads {word.text}, which may hold passwords or keys")

    def write(self, word: Word, *, deletes: bool = False) -> None:
        found = self.where(word)
        if found == "network_device":
            self.verdict.add("network", f"{self.name} sends data to {word.text}")
        elif found in ("home", "outside", "system", "root", "device"):
            self.verdict.add("outside_workspace", f"{self.name} changes {word.text}, outside the workspace")
        elif deletes:
            self.verdict.add("deletes", f"{self.name} removes {word.text}")
        else:
            self.verdict.add("writes", f"{self.name} writes {word.text}")

    def read_all(self, words: list[Word]) -> None:
        for word in words:
            if pathish(word) or is_secret(word.text):  # a bare `id_rsa` is a file in the working folder too
                self.read(word)

    def program(self, reason: str) -> None:
        self.verdict.add("runs_program", reason)

    def code(self, reason: str) -> None:
        self.verdict.add("code_execution", reason)

    def network(self, reason: str) -> None:
        self.verdict.add("network", reason)


def abbreviates(word: str, option: str) -> bool:
    """Is `word` a shorter spelling of the long `option` that getopt would accept (at least two letters)?"""
    if not option.startswith("--") or not word.startswith("--"):
        return False
    given = word[2:].split("=", 1)[0]
    return 2 <= len(given) < len(option) - 2 and option[2:].startswith(given)


def pathish(word: Word) -> bool:
    text = word.text
    return bool(text) and (
        "/" in text or text.startswith(("~", ".", "$")) or word.dynamic or text in ("..", ".") or ":" in text[1:3]
    )


WHOLE_ETC = re.compile(r"^/+etc/*(\*|\.\*)?$")  # the machine's whole configuration, where it keeps passwords
VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*|[0-9@*])")
POSITIONAL = frozenset("123456789@*")  # a script's arguments: one file name each time find -exec or xargs runs it


def computed(word: Word, ctx: Context, *, each_time: bool = False) -> bool:
    """Is `word` (a path) decided at run time by something other than the line's own text — a command's output,
    a file's lines, an unknown variable? Then its worst case is any path at all, the workspace itself included.
    `each_time`: only when it changes each time round a loop over such values (one path per line of a file)."""
    if not word.dynamic:
        return False
    text = word.raw or word.text
    names = VARIABLE.findall(text)
    if each_time:
        return any(name in ctx.loop_tainted or name in POSITIONAL for name in names)
    if "$(" in text or "`" in text or any(name in ctx.tainted for name in names):
        return True
    values = [KNOWN_PLACES.sub("", value) for value in expand(word.text, ctx)]
    return any("$" in value or "`" in value for value in values)


KNOWN_PLACES = re.compile(r"\$\{?(PWD|HOME|TMPDIR)\}?(?![A-Za-z0-9_])")  # where these point is judged by place()

"""How risky is a shell command line? Parsed, not pattern-matched.

`classify_command(line)` parses everything the line would run (shell.py), walks each command with
what is known of its program (programs.py), its assignments, its redirections and the paths it
names (verdict.py), and returns a `CommandRisk`: the level, the categories a person is shown, the
reason, and the line's parsed shape (`signature`) that an "always allow" rule names. A rule for
`make test` therefore never allows `make test || curl …`: that line has another shape.

The classifier only decides when to ask. The sandbox (confine.py) enforces: a command that is
misjudged here still runs without network, without the home folder and without host sockets.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path, PurePosixPath

from orkas.engine.sandbox import arith, known
from orkas.engine.sandbox.calls import WHOLESALE, Call, computed, pathish
from orkas.engine.sandbox.programs import judge_program
from orkas.engine.sandbox.shell import MAX_DEPTH, Command, ParseError, Redirect, Script, Word, parse
from orkas.engine.sandbox.verdict import Category, CommandRisk, Context, Level, Verdict, is_secret, place

__all__ = ["Category", "CommandRisk", "Level", "classify_command"]

INPUT_REDIRECTS = frozenset({"<"})
PROMPT_EXPANSION = re.compile(r"\$\{[^}]*@P\}")
OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/@]*@)?([^/:?#]+)")
REMOTE = re.compile(r"^(?:[\w.-]+@)?([\w.-]+):(?!//)")


def classify_command(
    line: str,
    *,
    workspace: Path | str | None = None,
    roots: Iterable[Path | str] = (),
    package_commands: Iterable[str] = (),
) -> CommandRisk:
    """Judge a shell command line. Never raises. Absolute paths inside `workspace` or `roots` count as inside;
    `package_commands` are names only an installed package provides (they run its code, whatever they are called)."""
    if not line.strip():
        return CommandRisk("read_only", (), "empty command", "")
    verdict = Verdict()
    ctx = Context(
        workspace=PurePosixPath(str(workspace)) if workspace is not None else None,
        roots=tuple(PurePosixPath(str(r)) for r in roots),
        package_commands=frozenset(package_commands),
    )
    try:
        script = parse(line)
    except ParseError as e:
        verdict.add("runs_program", f"the line cannot be parsed safely ({e})")
        return verdict.risk("")
    _Walker(ctx, verdict, 0).script(script)
    return verdict.risk(signature(script, ctx))


class _Walker:
    def __init__(self, ctx: Context, verdict: Verdict, depth: int) -> None:
        self.ctx = ctx
        self.verdict = verdict
        self.depth = depth

    def script(self, script: Script) -> None:
        self.ctx.functions |= script.functions
        for name, values in script.loops:
            self.ctx.variables[name] = [v.text for v in values if not v.dynamic] or []
            if any(v.dynamic or v.glob for v in values):  # file names and command output: not the line's own text
                self.ctx.tainted.add(name)
                self.ctx.loop_tainted.add(name)
            for value in values:
                self._loop_value(value)
        for body in script.arithmetic:
            for inner in known.hidden_commands(body):
                self.line(inner)
        for command in script.commands:
            self.command(command)
        for body in script.arithmetic:  # after the commands: the line's own assignments are known by now
            self.arithmetic(body)

    def arithmetic(self, body: str) -> None:
        why = arith.unsafe(body, self.ctx)
        if why is not None:
            self.verdict.add("code_execution", why)

    def _loop_value(self, value: Word) -> None:
        if pathish(value) and place(value.text, self.ctx, dynamic=value.dynamic) in ("home", "outside", "root"):
            self.verdict.add("outside_workspace", f"the loop goes over {value.text}, outside the workspace")

    def command(self, command: Command) -> None:
        raws = [w.raw or w.text for w in command.argv] + [v.raw or v.text for _, v in command.assignments]
        if any(PROMPT_EXPANSION.search(raw) for raw in raws):
            self.verdict.add("code_execution", "${…@P} expands a value as a prompt: the commands in it run")
        for redirect in command.redirects:
            self.redirect(redirect)
        for name, value in command.assignments:
            known.check_assignment(self.verdict, name, value.raw or value.text, self.line)
            if value.dynamic or value.glob:
                self.ctx.tainted.add(name)
            if name in self.ctx.integers:  # declared -i: bash evaluates what is assigned
                if value.dynamic:
                    self.verdict.add("code_execution", f"{name} is an integer: bash evaluates the computed value")
                self.arithmetic(value.raw or value.text)
            if not command.argv:
                self.ctx.variables[name] = [] if value.dynamic else [value.text]
        if command.argv:
            self.words(command.argv, command)

    def words(self, argv: list[Word], command: Command) -> None:
        if self.depth > MAX_DEPTH:
            self.verdict.add("runs_program", "commands are nested too deeply to judge")
            return
        first = argv[0]
        if first.dynamic:
            self._computed(first, argv, command)
            return
        name = first.text
        if "/" in name:
            where = place(name, self.ctx)
            if where != "system":
                category: Category = "outside_workspace" if where in ("home", "outside", "root") else "runs_program"
                self.verdict.add(category, f"runs the program {name}")
                return
            name = name.rsplit("/", 1)[-1]
        if name in self.ctx.functions:
            return  # its body is judged where it is defined
        if name in self.ctx.package_commands and "/" not in first.text:
            self.verdict.add("runs_program", f"{name} is a command of an installed package: it runs the package's code")
            return
        inner = _Walker(self.ctx, self.verdict, self.depth + 1)
        call = Call(name, argv[1:], command, self.ctx, self.verdict, lambda ws: inner.words(ws, command), inner.line)
        judge_program(call)

    def _computed(self, first: Word, argv: list[Word], command: Command) -> None:
        """A command name from a variable: judged as each value it was given in the line, else unknown."""
        self.verdict.add("runs_program", f"the command name {first.raw or first.text!r} is computed at run time")
        m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", first.raw or first.text)
        values = self.ctx.variables.get(m.group(1)) if m else None
        if not values:
            return
        for value in values:
            words = [Word(part) for part in value.split()]
            if words:
                self.words(words + argv[1:], command)

    def line(self, text: str) -> None:
        """A string a program will run as a shell line (sh -c, eval, trap, env -S, watch)."""
        if self.depth + 1 > MAX_DEPTH:
            self.verdict.add("runs_program", "commands are nested too deeply to judge")
            return
        try:
            script = parse(text, self.depth + 1)
        except ParseError as e:
            self.verdict.add("runs_program", f"a command inside cannot be parsed safely ({e})")
            return
        nested = replace(
            self.ctx,
            variables=dict(self.ctx.variables),
            functions=set(self.ctx.functions),
            tainted=set(self.ctx.tainted),
            loop_tainted=set(self.ctx.loop_tainted),
            integers=set(self.ctx.integers),
        )
        _Walker(nested, self.verdict, self.depth + 1).script(script)

    def redirect(self, redirect: Redirect) -> None:
        op, target = redirect.op, redirect.target
        if op in (">&", "<&") and (target.text.isdigit() or target.text == "-"):
            return
        where = place(target.text, self.ctx, dynamic=target.dynamic)
        if where == "network_device":
            self.verdict.add("network", f"opens a network connection ({target.text})")
        elif op in INPUT_REDIRECTS:
            if where in ("home", "outside", "root", "device"):
                self.verdict.add("outside_workspace", f"reads {target.text}, outside the workspace")
            elif is_secret(target.text):
                self.verdict.add("secrets", f"reads {target.text}, which may hold passwords or keys")
        elif op in OUTPUT_REDIRECTS or op == ">&":
            if where == "scratch" and target.text.startswith("/dev/"):
                return
            if where in ("home", "outside", "root", "system", "device"):
                self.verdict.add("outside_workspace", f"writes {target.text}, outside the workspace")
            elif op not in (">>", "&>>") and computed(target, self.ctx, each_time=True):
                self.verdict.add("destructive", f"empties {target.text}, a file named by a list it goes through")
            else:
                self.verdict.add("writes", f"writes {target.text}")


# ----- the parsed shape of a line, for grants and "always allow" rules -----


def signature(script: Script, ctx: Context | None = None) -> str:
    """A readable canonical form: programs, subcommands and options as written; paths by where they point;
    URLs by host; computed parts as <dynamic>. Two lines with the same signature do the same kind of thing."""
    ctx = ctx or Context()
    parts: list[str] = []
    for name, values in script.loops:
        parts.append(f"for {name} in {' '.join(_shape(v, ctx) for v in values)};")
    for command in script.commands:
        words = [f"{name}={_shape(value, ctx)}" for name, value in command.assignments]
        argv = command.argv
        words += [_shape(w, ctx, first=i == 0, after=argv[i - 1].text if i else "") for i, w in enumerate(argv)]
        words += [f"{r.fd}{r.op} {_shape(r.target, ctx)}" for r in command.redirects]
        text = " ".join(words)
        if command.origin == "substitution":
            text = f"$({text})"
        elif command.origin == "process_substitution":
            text = f"<({text})"
        separator = command.separator if command.separator not in ("", "\n") else ";"
        parts.append(f"{text} {separator}")
    return " ".join(parts).rstrip(" ;")


PLAIN_PATH = re.compile(r"^[\w.~/+@%,=:-]+$")
MESSAGE_OPTIONS = frozenset({"-m", "--message", "--title", "--body", "--subject", "-F"})


def _shape(word: Word, ctx: Context, *, first: bool = False, after: str = "") -> str:
    """Paths, numbers, URLs and messages generalize; anything that could hold code stays as written."""
    text = word.text
    if word.dynamic:
        return "<dynamic>"
    if first or text in WHOLESALE:
        return text
    if after in MESSAGE_OPTIONS and not re.search(r"[$`]", text):
        return "<text>"
    if text.startswith("-") and "=" in text:
        option, value = text.split("=", 1)
        return f"{option}={_shape(Word(value), ctx)}"
    if text.startswith("-"):
        return text
    if text.startswith("@") and len(text) > 1:
        return "@" + _shape(Word(text[1:]), ctx)
    if (m := URL.match(text)) and not re.search(r"[$`\s]", text):
        return f"<url:{m.group(1).lower()}>"
    if (m := REMOTE.match(text)) and not text.startswith(("/", ".")) and PLAIN_PATH.match(text):
        return f"<remote:{m.group(1).lower()}>"
    if re.fullmatch(r"-?\d+(\.\d+)?[smhdKMGkb%]?", text):
        return "<n>"
    if PLAIN_PATH.match(text) and (pathish(word) or re.search(r"\.\w{1,5}$", text)):
        where = place(text, ctx)
        return "<path>" if where == "inside" else f"<path:{where}>"
    return shlex.quote(text)

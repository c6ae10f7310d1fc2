"""Arithmetic that runs code: bash evaluates a variable's *value* as an expression again.

In `$(( x ))`, `(( x ))`, `let`, `[[ x -eq 1 ]]`, `declare -i`, `${a[x]}` and `${s:x}` bash reads the value
of `x` as an arithmetic expression, and an expression may hold an array subscript with a command
substitution inside: `x='a[$(cmd)]'; echo $(( x ))` runs cmd. So arithmetic is safe only over values the
line itself wrote as numbers (or as expressions of such values) and over bash's own integers; a value that
comes from a file, a command, a glob, `read` or a loop over any of those is code as far as the classifier is
concerned. Names the line never assigns come from the environment Orkas gives the command, which the model
does not choose.
"""

from __future__ import annotations

import re

from orkas.engine.sandbox.known import hidden_commands
from orkas.engine.sandbox.shell import ParseError, parse
from orkas.engine.sandbox.verdict import Context

# Integers bash itself maintains: their values are numbers, whatever the line does.
BASH_INTEGERS = frozenset(
    "RANDOM SRANDOM LINENO SECONDS EPOCHSECONDS BASHPID PPID UID EUID OPTIND SHLVL HISTCMD COLUMNS LINES".split()
)
REFERENCE = re.compile(r"\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9@*])")
BARE_NAME = re.compile(r"(?<![\w$#{])([A-Za-z_][A-Za-z0-9_]*)")
NUMBER = re.compile(r"\s*[-+]?\s*(0[xX][0-9a-fA-F]+|\d+#[0-9a-zA-Z@_]+|\d+)\s*")
# An expression of numbers and operators only (names are checked one by one).
PLAIN = re.compile(r"[\sA-Za-z0-9_+\-*/%<>=!&|^~?:,()#]*")
OPERATORS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
MAX_DEPTH = 4


def unsafe(expression: str, ctx: Context, depth: int = 0) -> str | None:
    """Why evaluating `expression` as bash arithmetic may run code (None when it cannot)."""
    if "$(" in expression or "`" in expression:
        bodies = hidden_commands(expression)
        if not bodies or not all(prints_a_number(body) for body in bodies):
            return "arithmetic over a command's output, which bash evaluates again"
        for body in bodies:  # a count or a clock: judged as a number, its own command judged where it is
            expression = expression.replace(f"$({body})", "0").replace(f"`{body}`", "0")
    names = set(REFERENCE.findall(expression)) | set(BARE_NAME.findall(REFERENCE.sub(" ", expression)))
    for name in sorted(names):
        if name.isdigit() or name in ("@", "*"):
            return "arithmetic over the script's arguments, which are computed at run time"
        if name in BASH_INTEGERS:
            continue
        if name in ctx.tainted:
            return f"arithmetic over ${name}, whose value is computed at run time (bash evaluates it again)"
        for value in ctx.variables.get(name, []):
            if NUMBER.fullmatch(value):
                continue
            if depth >= MAX_DEPTH or not PLAIN.fullmatch(value):
                return f"arithmetic over ${name}, whose value {value!r} bash evaluates as code"
            inner = unsafe(value, ctx, depth + 1)
            if inner is not None:
                return inner
    return None


def prints_a_number(body: str) -> bool:
    """Does this command line print only a number (`wc -l < f`, `ls | wc -l`, `grep -c x f`, `date +%s`, `nproc`)?"""
    try:
        commands = [c for c in parse(body).commands if c.argv]
    except ParseError:
        return False
    if not commands:
        return False
    last = commands[-1].words
    name, args = last[0].rsplit("/", 1)[-1], last[1:]
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    if name == "wc":
        return sum(1 for c in flags if c in "lcwmL") == 1 and not [a for a in args if a.startswith("--")]
    if name == "grep":
        return "c" in flags
    if name in ("nproc", "getconf", "expr"):
        return True
    if name == "id":
        return bool(set(flags) & set("ug"))
    if name == "date":
        return any(re.fullmatch(r"\+(%[sYmdHMSjNu])+", a) for a in args)
    if name == "stat":
        formats = [a for a in args if a.startswith("%") or a.startswith("--format=")]
        return bool(formats) and all(re.fullmatch(r"(--format=)?(%[sYXZibh])+", f) for f in formats)
    return False


def comparison_operands(words: list[str]) -> list[str]:
    """The operands `[[ … ]]` evaluates as arithmetic: the words around -eq, -lt and the others."""
    operands: list[str] = []
    for i, word in enumerate(words):
        if word in OPERATORS:
            operands += words[max(0, i - 1) : i] + words[i + 1 : i + 2]
    return operands

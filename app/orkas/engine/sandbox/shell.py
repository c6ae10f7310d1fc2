"""A small parser for POSIX shell command lines, enough to see every command a line would run.

`parse(line)` returns the simple commands in order — argv words (quotes removed) plus their
redirections — including those hidden in pipelines, `&&`/`||`/`;` lists, subshells and braces,
`$( … )` and backtick substitutions (also inside double quotes), and `bash -c '…'` style strings
(unwrapped by risk.py). Words that the shell would compute at run time (`$VAR`, `$'\\x72'`, globs of
substitutions) are marked `dynamic`, because what they run cannot be known in advance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "\n")
REDIRECTS = ("&>>", "&>", ">>", ">|", "<<<", "<<", "<>", ">&", "<&", ">", "<")


@dataclass(slots=True)
class Word:
    text: str
    dynamic: bool = False  # contains $…, `…` or ANSI-C escapes: its value is decided at run time


@dataclass(slots=True)
class Command:
    argv: list[Word] = field(default_factory=list)
    redirects: list[tuple[str, Word]] = field(default_factory=list)  # (operator, target)
    piped_into: bool = False  # reads the previous command's output (… | this)

    @property
    def words(self) -> list[str]:
        return [w.text for w in self.argv]


class ParseError(ValueError):
    pass


class _Lexer:
    def __init__(self, line: str) -> None:
        self.s = line
        self.i = 0
        self.substitutions: list[str] = []  # bodies of $( ) and ` `, parsed later

    def tokens(self) -> list[tuple[str, str | Word]]:
        """('op', text) | ('redir', op) | ('word', Word) | ('open', '(') | ('close', ')')."""
        out: list[tuple[str, str | Word]] = []
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\\" and self.s[self.i : self.i + 2] == "\\\n":
                self.i += 2
            elif c == "#" and (not out or out[-1][0] != "word" or self.s[self.i - 1] in " \t"):
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            elif c in "()":
                out.append(("open" if c == "(" else "close", c))
                self.i += 1
            elif (op := self._match(OPERATORS)) is not None:
                out.append(("op", op))
            elif (redir := self._redirect()) is not None:
                out.append(("redir", redir))
            else:
                out.append(("word", self._word()))
        return out

    def _match(self, options: tuple[str, ...]) -> str | None:
        for option in options:
            if self.s.startswith(option, self.i):
                self.i += len(option)
                return option
        return None

    def _redirect(self) -> str | None:
        start = self.i
        while self.i < len(self.s) and self.s[self.i].isdigit():
            self.i += 1
        op = self._match(REDIRECTS)
        if op is None:
            self.i = start
            return None
        return op

    def _word(self) -> Word:
        text: list[str] = []
        dynamic = False
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t\n;&|()<>":
                break
            if c == "\\":
                text.append(self.s[self.i + 1 : self.i + 2])
                self.i += 2
            elif c == "'":
                end = self.s.find("'", self.i + 1)
                if end < 0:
                    raise ParseError("unterminated single quote")
                text.append(self.s[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                part, dyn = self._double_quoted()
                text.append(part)
                dynamic = dynamic or dyn
            elif c == "`":
                text.append(self._backtick())
                dynamic = True
            elif c == "$":
                text.append(self._dollar())
                dynamic = True
            else:
                text.append(c)
                self.i += 1
        return Word("".join(text), dynamic)

    def _double_quoted(self) -> tuple[str, bool]:
        self.i += 1
        text: list[str] = []
        dynamic = False
        while self.i < len(self.s) and self.s[self.i] != '"':
            c = self.s[self.i]
            if c == "\\" and self.i + 1 < len(self.s):
                text.append(self.s[self.i + 1])
                self.i += 2
            elif c == "$":
                text.append(self._dollar())
                dynamic = True
            elif c == "`":
                text.append(self._backtick())
                dynamic = True
            else:
                text.append(c)
                self.i += 1
        if self.i >= len(self.s):
            raise ParseError("unterminated double quote")
        self.i += 1
        return "".join(text), dynamic

    def _backtick(self) -> str:
        """A `…` substitution: its body is kept for parsing; the word gets a placeholder."""
        end = self.s.find("`", self.i + 1)
        if end < 0:
            raise ParseError("unterminated backtick")
        self.substitutions.append(self.s[self.i + 1 : end])
        self.i = end + 1
        return "`…`"

    def _dollar(self) -> str:
        """$(…), $((…)), ${…}, $'…', $name: returns a placeholder; substitutions are kept for parsing."""
        rest = self.s[self.i + 1 :]
        if rest.startswith("(("):
            end = self._closing(self.i + 1, "(", ")")
            self.i = end + 1
            return "$((…))"
        if rest.startswith("("):
            end = self._closing(self.i + 1, "(", ")")
            self.substitutions.append(self.s[self.i + 2 : end])
            self.i = end + 1
            return "$(…)"
        if rest.startswith("{"):
            end = self.s.find("}", self.i)
            if end < 0:
                raise ParseError("unterminated ${")
            name = self.s[self.i : end + 1]
            self.i = end + 1
            return name
        if rest.startswith("'"):
            end = self.s.find("'", self.i + 2)
            if end < 0:
                raise ParseError("unterminated $'")
            self.i = end + 1
            return "$'…'"
        start = self.i
        self.i += 1
        while self.i < len(self.s) and (self.s[self.i].isalnum() or self.s[self.i] in "_?@*#!$-"):
            self.i += 1
            if self.s[self.i - 1] in "?@*#!$-":
                break
        return self.s[start : self.i]

    def _closing(self, start: int, open_: str, close: str) -> int:
        depth = 0
        i = start
        quote: str | None = None
        while i < len(self.s):
            c = self.s[i]
            if quote:
                if c == quote:
                    quote = None
            elif c in "'\"":
                quote = c
            elif c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return i
            i += 1
        raise ParseError(f"unterminated {open_}")


MAX_DEPTH = 8


def parse(line: str, depth: int = 0) -> list[Command]:
    """Every simple command `line` would run, outermost first. Raises `ParseError`."""
    if depth > MAX_DEPTH:
        raise ParseError("commands nested too deeply")
    lexer = _Lexer(line)
    tokens = lexer.tokens()
    commands: list[Command] = []
    current = Command()
    pending_redirect: str | None = None
    piped = False
    for kind, value in tokens:
        if kind == "word":
            assert isinstance(value, Word)
            if pending_redirect is not None:
                current.redirects.append((pending_redirect, value))
                pending_redirect = None
            else:
                current.argv.append(value)
        elif kind == "redir":
            assert isinstance(value, str)
            pending_redirect = value
        elif kind in ("open", "close"):
            continue  # subshells and groups run their commands like any other list
        else:
            if current.argv or current.redirects:
                current.piped_into = piped
                commands.append(current)
            piped = value in ("|", "|&")
            current = Command()
    if pending_redirect is not None:
        raise ParseError(f"redirection {pending_redirect!r} has no target")
    if current.argv or current.redirects:
        current.piped_into = piped
        commands.append(current)
    for body in lexer.substitutions:
        commands.extend(parse(body, depth + 1))
    return commands

"""A parser for bash command lines: every command a line would run, and how.

`parse(line)` returns a `Script`: the simple commands in order — argv words (quotes removed), the
assignments before them (`VAR=value cmd`), their redirections, whether they read a pipe — including
those inside subshells and groups, function bodies, `case` arms, `if`/`while` lists, `$( … )` and
backtick substitutions (also inside double quotes, `${ … }` bodies, `$(( … ))` arithmetic and
unquoted here-documents) and `<( … )` / `>( … )` process substitutions. It also returns the loop
variables (`for f in a b`), the functions defined, and the arithmetic bodies, which the risk rules
need. Words that the shell computes at run time (`$VAR`, `$(…)`, `$'\\x72'`) are marked `dynamic`.

It is not a full bash grammar: where it cannot follow, it raises `ParseError`, and the caller treats
the line as one that must be asked about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

OPERATORS = (";;&", "&&", "||", ";;", ";&", "|&", ";", "|", "&", "\n")
REDIRECTS = ("&>>", "&>", ">>", ">|", ">&", "<&", "<<<", "<<-", "<<", "<>", ">", "<")
BREAK = frozenset(" \t\n;&|()<>")
ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "coproc"})
MAX_DEPTH = 8
Origin = Literal["line", "substitution", "process_substitution"]


class ParseError(ValueError):
    pass


@dataclass(slots=True)
class Word:
    text: str  # quotes removed; expansions kept as their source text
    raw: str = ""  # the word as written
    dynamic: bool = False  # contains $…, `…` or $'…': its value is decided at run time
    glob: bool = False  # contains an unquoted * ? or [
    quoted: bool = False


@dataclass(slots=True)
class Redirect:
    op: str
    target: Word
    fd: str = ""


@dataclass(slots=True)
class Command:
    argv: list[Word] = field(default_factory=list)
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    piped_into: bool = False  # reads the previous command's output (… | this)
    separator: str = ""  # the operator after it
    origin: Origin = "line"
    arith: str | None = None  # the body of a `(( … ))` command

    @property
    def words(self) -> list[str]:
        return [w.text for w in self.argv]


@dataclass(slots=True)
class Script:
    commands: list[Command] = field(default_factory=list)
    loops: list[tuple[str, list[Word]]] = field(default_factory=list)  # for NAME in WORDS
    functions: set[str] = field(default_factory=set)
    arithmetic: list[str] = field(default_factory=list)  # bodies of $(( )) and (( ))


TokenKind = Literal["word", "op", "redir", "(", ")", "arith"]


@dataclass(frozen=True, slots=True)
class Token:
    kind: TokenKind
    text: str = ""  # the operator, the redirection operator, or the arithmetic body
    word: Word = field(default_factory=lambda: Word(""))
    fd: str = ""  # a redirection's file descriptor

    def is_word(self, text: str) -> bool:
        return self.kind == "word" and self.word.text == text


class _Lexer:
    def __init__(self, line: str) -> None:
        self.s = line
        self.i = 0
        self.substitutions: list[tuple[Origin, str]] = []
        self.arithmetic: list[str] = []
        self._heredocs: list[tuple[str, bool, bool]] = []  # (delimiter, quoted, strip tabs)

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        expect_delimiter: str | None = None
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t":
                self.i += 1
            elif self.s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "#" and (self.i == 0 or self.s[self.i - 1] in " \t\n;&|()"):
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            elif self.s.startswith("((", self.i) and _command_start(out) and self._arithmetic_command(out):
                pass
            elif c in "<>" and self.s.startswith("(", self.i + 1):
                end = self._closing(self.i + 1, "(", ")")
                self.substitutions.append(("process_substitution", self.s[self.i + 2 : end]))
                out.append(Token("word", word=Word("/dev/fd/63", raw=self.s[self.i : end + 1], dynamic=True)))
                self.i = end + 1
            elif c in "()":
                out.append(Token("(" if c == "(" else ")"))
                self.i += 1
            elif (op := self._match(OPERATORS)) is not None:
                out.append(Token("op", op))
                if op == "\n":
                    self._read_heredocs()
            elif (redir := self._redirect()) is not None:
                out.append(Token("redir", redir[1], fd=redir[0]))
                if redir[1] in ("<<", "<<-"):
                    expect_delimiter = redir[1]
            else:
                word = self._word()
                out.append(Token("word", word=word))
                if expect_delimiter is not None:
                    quoted = word.quoted or "\\" in word.raw
                    self._heredocs.append((word.text, quoted, expect_delimiter == "<<-"))
                    expect_delimiter = None
        return out

    def _arithmetic_command(self, out: list[Token]) -> bool:
        """`(( … ))`: an arithmetic command (True), unless it is really two nested subshells."""
        end = self._closing(self.i, "(", ")")
        if self.s[end - 1] != ")":
            return False
        body = self.s[self.i + 2 : end - 1]
        self._expansions(body)
        self.arithmetic.append(body)
        out.append(Token("arith", body))
        self.i = end + 1
        return True

    def _read_heredocs(self) -> None:
        for delimiter, quoted, strip in self._heredocs:
            body: list[str] = []
            while self.i < len(self.s):
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                line = self.s[self.i : end]
                self.i = min(end + 1, len(self.s))
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
                body.append(line)
            if not quoted:
                self._expansions("\n".join(body))
        self._heredocs = []

    def _match(self, options: tuple[str, ...]) -> str | None:
        for option in options:
            if self.s.startswith(option, self.i):
                self.i += len(option)
                return option
        return None

    def _redirect(self) -> tuple[str, str] | None:
        start = self.i
        fd = ""
        if self.s.startswith("{", self.i):
            m = re.match(r"\{[A-Za-z_][A-Za-z0-9_]*\}", self.s[self.i :])
            if m:
                fd = m.group(0)
                self.i += len(fd)
        else:
            while self.i < len(self.s) and self.s[self.i].isdigit():
                fd += self.s[self.i]
                self.i += 1
        op = self._match(REDIRECTS)
        if op is None:
            self.i = start
            return None
        return fd, op

    def _word(self) -> Word:
        start = self.i
        text: list[str] = []
        dynamic = glob = quoted = False
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in BREAK:
                break
            if c == "\\":
                text.append(self.s[self.i + 1 : self.i + 2])
                self.i += 2
                quoted = True
            elif c == "'":
                end = self.s.find("'", self.i + 1)
                if end < 0:
                    raise ParseError("unterminated single quote")
                text.append(self.s[self.i + 1 : end])
                self.i = end + 1
                quoted = True
            elif c == '"':
                part, dyn = self._double_quoted()
                text.append(part)
                dynamic = dynamic or dyn
                quoted = True
            elif c == "`":
                text.append(self._backtick())
                dynamic = True
            elif c == "$":
                part, dyn = self._dollar()
                text.append(part)
                dynamic = dynamic or dyn
            else:
                if c in "*?[":
                    glob = True
                text.append(c)
                self.i += 1
        return Word("".join(text), raw=self.s[start : self.i], dynamic=dynamic, glob=glob, quoted=quoted)

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
                part, dyn = self._dollar()
                text.append(part)
                dynamic = dynamic or dyn
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
        """A `…` substitution: its body is kept for parsing; the word keeps its source text."""
        i = self.i + 1
        while i < len(self.s) and self.s[i] != "`":
            i += 2 if self.s[i] == "\\" else 1
        if i >= len(self.s):
            raise ParseError("unterminated backtick")
        body = self.s[self.i + 1 : i].replace("\\`", "`")
        self.substitutions.append(("substitution", body))
        source = self.s[self.i : i + 1]
        self.i = i + 1
        return source

    def _dollar(self) -> tuple[str, bool]:
        """$(…), $((…)), ${…}, $'…', $"…", $name: (source text, dynamic). Bodies are kept for parsing."""
        start = self.i
        rest = self.s[self.i + 1 : self.i + 3]
        if rest.startswith("(("):
            end = self._closing(self.i + 1, "(", ")")
            body = self.s[self.i + 3 : end - 1]
            self._expansions(body)
            self.arithmetic.append(body)
        elif rest.startswith("("):
            end = self._closing(self.i + 1, "(", ")")
            self.substitutions.append(("substitution", self.s[self.i + 2 : end]))
        elif rest.startswith("["):  # $[ … ]: the old spelling of $(( … ))
            end = self._closing(self.i + 1, "[", "]")
            body = self.s[self.i + 2 : end]
            self._expansions(body)
            self.arithmetic.append(body)
        elif rest.startswith("{"):
            end = self._closing(self.i + 1, "{", "}")
            body = self.s[self.i + 2 : end]
            self._expansions(body)
            self.arithmetic.extend(_arithmetic_parts(body))
        elif rest.startswith("'"):
            end = self.i + 2
            while end < len(self.s) and self.s[end] != "'":
                end += 2 if self.s[end] == "\\" else 1
            if end >= len(self.s):
                raise ParseError("unterminated $'")
        elif rest.startswith('"'):
            self.i += 1
            text, dynamic = self._double_quoted()
            return text, dynamic
        else:
            end = self.i
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|[0-9?@*#!$-]", self.s[self.i + 1 :])
            if m is None:
                self.i += 1
                return "$", False
            end = self.i + len(m.group(0))
        self.i = end + 1
        return self.s[start : self.i], True

    def _closing(self, start: int, open_: str, close: str) -> int:
        """Index of the bracket closing the one at `start`, skipping quoted text and nested pairs."""
        depth = 0
        i = start
        while i < len(self.s):
            c = self.s[i]
            if c == "\\":
                i += 2
                continue
            if c == "'" and open_ != "{":
                end = self.s.find("'", i + 1)
                if end < 0:
                    raise ParseError("unterminated single quote")
                i = end + 1
                continue
            if c == '"':
                i = self._skip_double(i)
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return i
            i += 1
        raise ParseError(f"unterminated {open_}")

    def _skip_double(self, i: int) -> int:
        i += 1
        while i < len(self.s) and self.s[i] != '"':
            i += 2 if self.s[i] == "\\" else 1
        if i >= len(self.s):
            raise ParseError("unterminated double quote")
        return i + 1

    def _expansions(self, text: str) -> None:
        """Register the substitutions inside text the shell expands (a ${…} or $((…)) body, a here-document).

        Quotes inside are taken as literal, so nothing hidden behind them is missed."""
        inner = _Lexer(text)
        j = 0
        while j < len(text):
            if text.startswith("$", j) or text[j] == "`":
                inner.i = j
                try:
                    if text[j] == "`":
                        inner._backtick()
                    else:
                        inner._dollar()
                except ParseError:
                    inner.i = j + 1
                j = max(inner.i, j + 1)
            else:
                j += 1
        self.substitutions.extend(inner.substitutions)
        self.arithmetic.extend(inner.arithmetic)


def _command_start(out: list[Token]) -> bool:
    if not out:
        return True
    last = out[-1]
    return last.kind in ("op", "(") or (last.kind == "word" and last.word.text in ("do", "then", "else", "{", "for"))


class _Parser:
    def __init__(self, tokens: list[Token], origin: Origin, script: Script) -> None:
        self.tokens = tokens
        self.origin = origin
        self.script = script
        self.pos = 0
        self.current = Command(origin=origin)
        self.piped = False
        self.case_state: list[str] = []  # "pattern" | "body", one per open `case`

    def run(self) -> None:
        while self.pos < len(self.tokens):
            token = self.tokens[self.pos]
            self.pos += 1
            if token.kind == "word":
                self._word(token.word)
            elif token.kind == "redir":
                self._redirect(token)
            elif token.kind == "op":
                if self.case_state and self.case_state[-1] == "pattern" and token.text in ("|", "\n"):
                    continue  # `a|b)` names two patterns; blank lines between arms
                self._finish(token.text)
            elif token.kind == "(":
                self._open()
            elif token.kind == ")":
                self._close()
            else:
                self.current.arith = token.text
                self.current.argv.append(Word("((", raw="((" + token.text + "))"))
        self._finish("")
        if self.case_state:
            raise ParseError("case without esac")

    def _at_start(self) -> bool:
        return not self.current.argv

    def _word(self, word: Word) -> None:
        if self.case_state and self.case_state[-1] == "pattern":
            if word.text == "esac" and not word.quoted:
                self.case_state.pop()
            return  # a pattern names values, it runs nothing (its expansions were registered)
        if self._at_start() and ASSIGNMENT.match(word.raw):
            self._assignment(word)
            return
        if self._at_start() and not word.quoted:
            if word.text in KEYWORDS or (word.text == "time" and not self.current.assignments):
                return
            if word.text == "esac" and self.case_state:
                self.case_state.pop()
                return
            if word.text in ("for", "select"):
                self._loop()
                return
            if word.text == "case":
                self._case()
                return
            if word.text == "function":
                self._function()
                return
            if word.text == "[[":
                self._conditional(word)
                return
        if self.current.argv and self.current.argv[0].text == "time" and word.text == "-p":
            return
        self.current.argv.append(word)

    def _assignment(self, word: Word) -> None:
        name = ASSIGNMENT.match(word.text).group(1)  # type: ignore[union-attr]
        value_text = word.text.split("=", 1)[1]
        raw_value = word.raw.split("=", 1)[1] if "=" in word.raw else ""
        value = Word(value_text, raw=raw_value, dynamic=word.dynamic, glob=word.glob, quoted=word.quoted)
        if value_text == "" and self._peek_kind() == "(":  # NAME=( a b c )
            self.pos += 1
            items: list[str] = []
            while self.pos < len(self.tokens) and self.tokens[self.pos].kind != ")":
                item = self.tokens[self.pos]
                if item.kind == "word":
                    items.append(item.word.raw)
                self.pos += 1
            self.pos += 1
            value = Word(" ".join(items), raw=" ".join(items), dynamic=any("$" in i or "`" in i for i in items))
        self.current.assignments.append((name, value))

    def _peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _peek_kind(self) -> str:
        token = self._peek()
        return token.kind if token is not None else ""

    def _next_word(self) -> Word | None:
        token = self._peek()
        if token is not None and token.kind == "word":
            self.pos += 1
            return token.word
        return None

    def _loop(self) -> None:
        if self._peek_kind() == "arith":
            self.pos += 1
            return
        name = self._next_word()
        if name is None:
            raise ParseError("for without a variable")
        values: list[Word] = []
        token = self._peek()
        if token is not None and token.is_word("in"):
            self.pos += 1
            while (token := self._peek()) is not None and token.kind == "word":
                values.append(token.word)
                self.pos += 1
        else:
            values.append(Word("$@", raw="$@", dynamic=True))
        self.script.loops.append((name.text, values))
        if self._peek_kind() == "op":
            self.pos += 1

    def _case(self) -> None:
        subject = self._next_word()
        keyword = self._next_word()
        if subject is None or keyword is None or keyword.text != "in":
            raise ParseError("case without `in`")
        self.case_state.append("pattern")
        while (token := self._peek()) is not None and token.kind == "op" and token.text == "\n":
            self.pos += 1

    def _function(self) -> None:
        name = self._next_word()
        if name is None:
            raise ParseError("function without a name")
        self.script.functions.add(name.text)
        if self._peek_kind() == "(":
            self.pos += 1
            if self._peek_kind() == ")":
                self.pos += 1

    def _conditional(self, first: Word) -> None:
        """`[[ … ]]`: everything up to `]]` is one test, operators included."""
        self.current.argv.append(first)
        while self.pos < len(self.tokens):
            token = self.tokens[self.pos]
            self.pos += 1
            if token.kind == "word":
                self.current.argv.append(token.word)
                if token.word.text == "]]":
                    return
            else:
                self.current.argv.append(Word(token.text or token.kind))
        raise ParseError("[[ without ]]")

    def _redirect(self, token: Token) -> None:
        target = self._next_word()
        if target is None:
            raise ParseError(f"redirection {token.text!r} has no target")
        self.current.redirects.append(Redirect(op=token.text, target=target, fd=token.fd))

    def _open(self) -> None:
        argv = self.current.argv
        if len(argv) == 1 and not argv[0].dynamic and self._peek_kind() == ")":  # name() { … }
            self.pos += 1
            self.script.functions.add(argv[0].text)
            self.current = Command(origin=self.origin)
            return
        if self.case_state and self.case_state[-1] == "pattern":
            return  # ( pattern ) — the optional opening parenthesis of a case arm
        self._finish("(")

    def _close(self) -> None:
        if self.case_state and self.case_state[-1] == "pattern":
            self.case_state[-1] = "body"
            return
        self._finish(")")

    def _finish(self, separator: str) -> None:
        command = self.current
        if command.argv or command.assignments or command.redirects:
            command.piped_into = self.piped
            command.separator = separator
            self.script.commands.append(command)
        self.piped = separator in ("|", "|&")
        if separator in (";;", ";&", ";;&") and self.case_state:
            self.case_state[-1] = "pattern"
        self.current = Command(origin=self.origin)


PARAMETER_PARTS = re.compile(r"^[#!]?[A-Za-z_][A-Za-z0-9_]*(?:\[([^\]]*)\])?(?::(?![-=?+])(.*))?$", re.DOTALL)


def _arithmetic_parts(body: str) -> list[str]:
    """The parts of a `${…}` body bash evaluates as arithmetic: an array subscript, a substring's offset and
    length (`${a[i]}`, `${s:i:n}`)."""
    m = PARAMETER_PARTS.match(body)
    if m is None:
        return []
    return [part for part in m.groups() if part and part not in ("@", "*")]


def parse(line: str, depth: int = 0, origin: Origin = "line") -> Script:
    """Every command `line` would run, outermost first. Raises `ParseError`."""
    script = Script()
    _parse_into(line, depth, origin, script)
    return script


def _parse_into(line: str, depth: int, origin: Origin, script: Script) -> None:
    if depth > MAX_DEPTH:
        raise ParseError("commands nested too deeply")
    lexer = _Lexer(line)
    tokens = lexer.tokens()
    _Parser(tokens, origin, script).run()
    script.arithmetic.extend(lexer.arithmetic)
    for kind, body in lexer.substitutions:
        _parse_into(body, depth + 1, kind, script)

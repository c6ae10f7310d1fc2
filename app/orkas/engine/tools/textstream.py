"""Reading text files in one pass with bounded memory: a page of lines or characters, the file's sha256,
its line and character counts — without holding the file.

Binary files are recognised on the first block (a NUL byte). A line longer than `line_cap` characters
is kept only up to that cap, so a file that is one 60 MB line costs no more than one with short lines.
"""

from __future__ import annotations

import codecs
import hashlib
from dataclasses import dataclass, field
from typing import BinaryIO

BLOCK = 1024 * 1024
FIRST_BLOCK = 8192


class BinaryFile(ValueError):
    """The file is not text (a NUL byte in its first block)."""


@dataclass(slots=True)
class Page:
    """What one pass over a file found."""

    sha256: str = ""
    size: int = 0
    lines: int = 0  # lines in the file (a last line without a newline counts)
    characters: int = 0
    shown: list[tuple[int, str, bool]] = field(default_factory=list)  # (number, text, cut) in line mode
    text: str = ""  # the characters asked for, in character mode
    stopped_early: bool = False  # the page filled up before the range ended


def read_page(
    handle: BinaryIO,
    *,
    start_line: int = 1,
    max_lines: int = 2000,
    char_start: int | None = None,
    char_end: int | None = None,
    line_cap: int = 2000,
    budget: int = 200_000,
) -> Page:
    """Read `handle` to its end once. Line mode unless `char_start`/`char_end` is given. Raises `BinaryFile`."""
    page = Page()
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    first = handle.read(FIRST_BLOCK)
    if b"\0" in first:
        raise BinaryFile("binary")
    characters = char_start is not None or char_end is not None
    state = _Lines(page, start_line, max_lines, line_cap, budget)
    chars = _Chars(page, char_start or 0, char_end, budget)
    chunk = first
    while chunk:
        digest.update(chunk)
        page.size += len(chunk)
        text = decoder.decode(chunk)
        page.characters += len(text)
        if characters:
            chars.feed(text)
        else:
            state.feed(text)
        chunk = handle.read(BLOCK)
    tail = decoder.decode(b"", final=True)
    page.characters += len(tail)
    if characters:
        chars.feed(tail)
    else:
        state.feed(tail)
        state.finish()
    page.sha256 = digest.hexdigest()
    return page


class _Lines:
    """Collects lines start..end; lines before and after are only counted (in bulk, not one by one)."""

    def __init__(self, page: Page, start: int, limit: int, cap: int, budget: int) -> None:
        self.page, self.start, self.end, self.cap, self.budget = page, start, start + limit - 1, cap, budget
        self.current: list[str] = []
        self.current_size = 0
        self.cut = False
        self.partial = False  # characters since the last newline (a last line without one still counts)
        self.used = 0

    def feed(self, text: str) -> None:
        while text:
            number = self.page.lines + 1
            if number > self.end or self.page.stopped_early:
                self._count(text)
                return
            if number < self.start:
                text = self._skip(text, self.start - number)
                continue
            newline = text.find("\n")
            piece = text if newline < 0 else text[:newline]
            self._add(piece)
            if newline < 0:
                return
            self._end_line()
            text = text[newline + 1 :]

    def _count(self, text: str) -> None:
        newlines = text.count("\n")
        self.page.lines += newlines
        self.partial = not text.endswith("\n") if newlines else self.partial or bool(text)
        self.current, self.current_size, self.cut = [], 0, False

    def _skip(self, text: str, lines: int) -> str:
        """Drop up to `lines` whole lines from the front of text; returns what is left."""
        position = -1
        for _ in range(lines):
            found = text.find("\n", position + 1)
            if found < 0:
                break
            position = found
            self.page.lines += 1
            self.partial = False
        else:
            return text[position + 1 :]
        if text[position + 1 :]:
            self.partial = True
        return ""

    def _add(self, piece: str) -> None:
        if piece:
            self.partial = True
        room = self.cap - self.current_size
        if room > 0:
            self.current.append(piece[:room])
        if len(piece) > room:
            self.cut = True
        self.current_size += len(piece)

    def _end_line(self) -> None:
        self.page.lines += 1
        number = self.page.lines
        if self.start <= number <= self.end and not self.page.stopped_early:
            line = "".join(self.current).removesuffix("\r")
            self.used += len(line) + 8
            if self.used > self.budget and self.page.shown:
                self.page.stopped_early = True
            else:
                self.page.shown.append((number, line, self.cut))
        self.current, self.current_size, self.cut, self.partial = [], 0, False, False

    def finish(self) -> None:
        if self.partial or self.current:
            self._end_line()


class _Chars:
    def __init__(self, page: Page, start: int, end: int | None, budget: int) -> None:
        self.page, self.start, self.budget = page, start, budget
        self.end = min(end if end is not None else start + budget, start + budget)
        self.seen = 0
        self.parts: list[str] = []

    def feed(self, text: str) -> None:
        begin, finish = self.seen, self.seen + len(text)
        self.seen = finish
        low, high = max(begin, self.start), min(finish, self.end)
        if low < high:
            self.parts.append(text[low - begin : high - begin])
            self.page.text = "".join(self.parts)

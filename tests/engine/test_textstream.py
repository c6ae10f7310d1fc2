"""Paging through text in one pass: the same answer as splitting the whole text, in bounded memory."""

from __future__ import annotations

import asyncio
import hashlib
import io
import tracemalloc
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from orkas.engine.abort import AbortSignal
from orkas.engine.sandbox import PathPolicy
from orkas.engine.tools.base import ToolContext
from orkas.engine.tools.files import ReadFile
from orkas.engine.tools.textstream import read_page


class Trickle(io.RawIOBase):
    """A file that hands out at most `size` bytes per read: chunk boundaries anywhere, even inside a character."""

    def __init__(self, data: bytes, size: int) -> None:
        self.data, self.size, self.at = data, size, 0

    def read(self, n: int = -1) -> bytes:
        chunk = self.data[self.at : self.at + min(self.size, n if n >= 0 else self.size)]
        self.at += len(chunk)
        return chunk


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(["a", "é", "中", "\n", "\r", "x"]), max_size=60),
    chunk=st.integers(min_value=1, max_value=7),
    start=st.integers(min_value=1, max_value=12),
    limit=st.integers(min_value=1, max_value=5),
)
def test_a_page_of_lines_is_what_splitting_gives(text: str, chunk: int, start: int, limit: int) -> None:
    data = text.encode()
    page = read_page(Trickle(data, chunk), start_line=start, max_lines=limit)  # type: ignore[arg-type]
    lines = [] if text == "" else (text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"))
    expected = [(i + 1, line.removesuffix("\r")) for i, line in enumerate(lines)][start - 1 : start - 1 + limit]
    assert page.lines == len(lines)
    assert [(n, line) for n, line, _ in page.shown] == expected
    assert page.characters == len(text) and page.sha256 == hashlib.sha256(data).hexdigest()


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(["a", "é", "中", "\n"]), max_size=60),
    chunk=st.integers(min_value=1, max_value=7),
    start=st.integers(min_value=0, max_value=70),
    length=st.integers(min_value=1, max_value=20),
)
def test_a_range_of_characters_is_what_slicing_gives(text: str, chunk: int, start: int, length: int) -> None:
    page = read_page(Trickle(text.encode(), chunk), char_start=start, char_end=start + length)  # type: ignore[arg-type]
    assert page.text == text[start : start + length]


def test_reading_five_lines_of_a_60_mb_file_holds_little_memory(tmp_path: Path) -> None:
    line = b"2026-12-01 12:00:00 INFO served /api/items?id=42 in 12 ms\n"
    (tmp_path / "big.log").write_bytes(line * (60 * 1024 * 1024 // len(line)))
    (tmp_path / "one.txt").write_bytes(b"x" * 60 * 1024 * 1024)  # one 60 MB line
    tool, ctx = ReadFile(PathPolicy(tmp_path, home=tmp_path.parent / "elsewhere")), _ctx(tmp_path)
    for name in ("big.log", "one.txt"):
        tracemalloc.start()
        try:
            result = asyncio.run(tool.execute({"path": name, "max_lines": 5}, ctx))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert not result.is_error and peak < 16 * 1024 * 1024, (name, peak)
    text = asyncio.run(tool.execute({"path": "big.log", "max_lines": 5}, ctx)).content[0].text  # type: ignore[union-attr]
    assert text.startswith("1\t2026-12-01") and "[more available from line 6 of " in text


def _ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace, signal=AbortSignal(), tool_use_id="t")

"""Cutting documents into chunks at line boundaries, with a little overlap.

Sizes are in estimated tokens (the same estimator as the context meter), so a chunk of Chinese holds
fewer characters than a chunk of English but about as much meaning. A line longer than a chunk is
split on sentence ends, then hard, so nothing is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from orkas.engine.tokens import estimate_tokens

# Measured with the bundled model on 2 cores (bench/embedding_rate.py): chunks of 128 estimated tokens
# embed ~7 a second for code and English, 22% more text per second than chunks of 256 (the model's cost
# grows faster than the text); ~12 a second for Chinese. Retrieval quality was the same or better.
CHUNK_TOKENS = 128
OVERLAP_LINES = 2


@dataclass(frozen=True, slots=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str


def chunk_text(text: str, *, max_tokens: int = CHUNK_TOKENS, overlap_lines: int = OVERLAP_LINES) -> list[Chunk]:
    lines: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for piece in _split_long(line, max_tokens):
            lines.append((number, piece))
    chunks: list[Chunk] = []
    start = 0
    while start < len(lines):
        end, used = start, 0
        while end < len(lines):
            cost = estimate_tokens(lines[end][1]) + 1
            if used and used + cost > max_tokens:
                break
            used += cost
            end += 1
        body = "\n".join(line for _, line in lines[start:end])
        if body.strip():
            chunks.append(Chunk(lines[start][0], lines[end - 1][0], body))
        if end >= len(lines):
            break
        start = max(end - overlap_lines, start + 1)  # overlap, but always move on
    return chunks


def _split_long(line: str, max_tokens: int) -> list[str]:
    if estimate_tokens(line) <= max_tokens:
        return [line]
    pieces: list[str] = []
    current = ""
    for sentence in re.split(r"(?<=[.!?。！？；;])\s*", line):
        if current and estimate_tokens(current + sentence) > max_tokens:
            pieces.append(current)
            current = ""
        if estimate_tokens(sentence) > max_tokens:  # no sentence ends: cut by size
            *whole, sentence = _cut(sentence, max_tokens)
            pieces.extend(whole)
        current += sentence
    if current:
        pieces.append(current)
    return pieces


def _cut(text: str, max_tokens: int) -> list[str]:
    """`text` in pieces of at most `max_tokens`, in one pass: the size of a piece comes from the whole text's density,
    measured once (re-measuring what was left after each cut made an 800 KB line with no sentence end take ~11
    minutes), and a piece denser than the average is shortened until it fits."""
    size = max(1, len(text) * max_tokens // max(1, estimate_tokens(text)))
    pieces, start = [], 0
    while start < len(text):
        piece = text[start : start + size]
        while len(piece) > 1 and estimate_tokens(piece) > max_tokens:
            piece = piece[: len(piece) * 3 // 4]
        pieces.append(piece)
        start += len(piece)
    return pieces

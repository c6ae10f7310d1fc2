"""What the keyword index holds, and the terms a query looks for in it.

The index is SQLite FTS5 with the Porter stemmer over Unicode words, so English matches across word
forms ("sorted" finds "sort"). Chinese, Japanese and Korean have no spaces between words, and most
Chinese words are two characters long, so a run of those scripts is cut into its overlapping
two-character windows before it is indexed ("向量检索" → "向量 量检 检索"), and a query is cut the same
way: any two-character word in it then matches, at the cost of some windows that straddle two words
and match nothing. (The trigram tokenizer this replaces could not match a two-character word at all:
Chinese keyword nDCG@10 was 0.37 on the quality set, 0.86 with windows of two.)

A query keeps identifiers and paths whole — "os.path.join" must find those three words in a row — and leaves
out words that tell nothing: English stop words, and Chinese windows holding a particle (的, 了, 吗 …)
or a question word (什么, 怎么 …).
"""

from __future__ import annotations

import re
import sqlite3

# Stored beside the index: a knowledge base written with another version re-indexes its chunks on open
KEYWORD_INDEX = "porter-bigram-1"
TOKENIZER = "porter unicode61"

STOP_WORDS = frozenset(
    "the and for with that this from are was were have has had what which how where when who why you your "
    "can could does did not but all any its into about there their them they then than also just only will "
    "would should some such more most other our out over very is to of in on at by it be as or an do if no so "
    "we us my me he up".split()
)
PARTICLES = frozenset("的了吗么呢吧啊呀嘛")
CHINESE_STOP = frozenset(
    "可以 怎么 什么 哪里 哪些 多少 多久 需要 如何 是否 没有 这个 那个 我们 你们 他们 应该 请问".split()
)

_SCRIPTS = r"\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
CJK = re.compile(rf"[{_SCRIPTS}]")
_RUN = re.compile(rf"[{_SCRIPTS}]+")
_PIECE = re.compile(rf"[{_SCRIPTS}]+|[^\W_]+")  # what the index sees as words (before stemming)
_QUERY_WORD = re.compile(rf"[{_SCRIPTS}]+|[\w./+#-]+")  # identifiers and paths stay in one piece


def pairs(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)] or [run]


def index_text(text: str) -> str:
    """`text` as the keyword index stores it: runs of CJK script become their two-character windows."""
    return _RUN.sub(lambda m: " " + " ".join(pairs(m.group())) + " ", text)


def words(text: str) -> set[str]:
    """The distinct words of `text` as indexed (casefolded, before stemming): what document
    frequencies are counted over."""
    found: set[str] = set()
    for piece in _PIECE.findall(text.casefold()):
        found.update(pairs(piece) if CJK.match(piece) else (piece,))
    return found


def query_terms(query: str, cap: int = 48) -> list[str]:
    """The terms to match, each a word, a two-character window or an identifier's words in a row
    ("os path join"), without stop words, in the order they appear."""
    found: list[str] = []
    for token in _QUERY_WORD.findall(query.casefold()):
        if CJK.match(token):
            terms = [p for p in pairs(token) if not PARTICLES & set(p) and p not in CHINESE_STOP]
        else:
            parts = _PIECE.findall(token)
            if len(parts) == 1 and (len(parts[0]) < 2 or parts[0] in STOP_WORDS):
                continue
            terms = [" ".join(parts)] if parts else []
        for term in terms:
            if term not in found:
                found.append(term)
    return found[:cap]


Span = tuple[int, int]  # [start, end) in a text


def highlights(texts: list[str], query: str) -> list[list[Span]]:
    """Where each text holds the query's words, as the keyword index matches them (the same stemmer: "lighthouse"
    marks "Lighthouses"; an identifier's words in a row), and its Chinese, Japanese or Korean windows as written:
    what a search result shows marked. Overlapping spans are merged; a text without the words gets none."""
    terms = query_terms(query)
    spans: list[list[Span]] = [[] for _ in texts]
    words = [term for term in terms if not CJK.match(term)]
    if words:
        db = sqlite3.connect(":memory:")
        try:
            db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZER}')")
            # the markers may not occur in a text: anything in their place keeps every offset where it was
            clean = [text.replace("\x02", " ").replace("\x03", " ") for text in texts]
            db.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", enumerate(clean))
            expression = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
            rows = db.execute("SELECT rowid, highlight(t, 0, char(2), char(3)) FROM t WHERE t MATCH ?", (expression,))
            for index, marked in rows:
                spans[index] += _marked_spans(marked)
        finally:
            db.close()
    for index, text in enumerate(texts):
        for term in (term for term in terms if CJK.match(term)):
            spans[index] += [(m.start(), m.end()) for m in re.finditer(re.escape(term), text)]
    return [_merged(found) for found in spans]


def _marked_spans(marked: str) -> list[Span]:
    found: list[Span] = []
    offset, start = 0, 0
    for char in marked:
        if char == "\x02":
            start = offset
        elif char == "\x03":
            found.append((start, offset))
        else:
            offset += 1
    return found


def _merged(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged

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

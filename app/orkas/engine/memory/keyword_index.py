"""The knowledge base's keyword arm: SQLite FTS5 with BM25 over what terms.py makes of each chunk, and the
document frequency of every word, kept as chunks come and go.

The frequencies serve twice: a word found in more than FREQUENT of the chunks is left out of the query (it
would make the query slow and the ranking noisy), and how many of the query's words the index knows, and how
rare they are, is the evidence adaptive fusion weighs (fusion.KeywordEvidence).

It lives in the knowledge base's database and is called under the knowledge base's lock and transactions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager

from orkas.engine.memory.fusion import KeywordEvidence
from orkas.engine.memory.terms import KEYWORD_INDEX, TOKENIZER, index_text, query_terms, words

SCORED = 1000  # keyword matches scored per query, at most
FREQUENT = 0.2  # a word in more than this share of chunks is too common to search for (BM25 gives it ~no weight)

# Contentless: the text lives in `chunks`; what the index holds is derived from it (terms.index_text)
SCHEMA = (
    f"CREATE VIRTUAL TABLE chunks_fts USING fts5(body, content='', tokenize='{TOKENIZER}')",
    "CREATE TABLE terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID",
)


class KeywordIndex:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def ready(self, transaction: Callable[[], AbstractContextManager[None]]) -> None:
        """Create the index, or rebuild it from the chunks when it was written by another version of the
        tokenizing rules (terms.KEYWORD_INDEX)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'keyword_index'").fetchone()
        if row is not None and row[0] == KEYWORD_INDEX:
            return
        with transaction():
            self._db.execute("DROP TABLE IF EXISTS chunks_fts")
            self._db.execute("DROP TABLE IF EXISTS terms")
            for statement in SCHEMA:  # one by one: executescript would commit halfway
                self._db.execute(statement)
            for chunk_id, text in self._db.execute("SELECT id, text FROM chunks").fetchall():
                self.add(chunk_id, text)
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('keyword_index', ?)", (KEYWORD_INDEX,))

    def add(self, chunk_id: int, text: str) -> None:
        self._db.execute("INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)", (chunk_id, index_text(text)))
        self._count(text, +1)

    def remove(self, chunk_id: int, text: str) -> None:
        # a contentless index forgets a row only when told exactly what it held
        self._db.execute(
            "INSERT INTO chunks_fts (chunks_fts, rowid, body) VALUES ('delete', ?, ?)", (chunk_id, index_text(text))
        )
        self._count(text, -1)

    def search(self, query: str, limit: int) -> tuple[list[tuple[int, float]], KeywordEvidence | None]:
        """BM25, best first, words too common to tell anything left out; and what the index knows of the
        query's words (None for a query without any)."""
        terms = query_terms(query)
        if not terms:
            return [], None
        total = self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        counts = self._frequencies(terms)
        evidence = KeywordEvidence(terms=len(terms), frequencies=counts, chunks=total)
        if total >= 200:  # below that, every word is worth looking for
            terms = [t for t in terms if counts[t] <= FREQUENT * total] or [min(terms, key=counts.__getitem__)]
        quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
        rows = self._scored(" OR ".join(quoted))
        if len(rows) >= SCORED and len(quoted) > 1:
            # Frequent words: every chunk matches. Chunks with all the words come first, so the
            # capped scoring below looks at the most likely ones instead of the oldest ones.
            both = self._scored(" AND ".join(quoted))
            ids = {r[0] for r in both}
            rows = both + [r for r in rows if r[0] not in ids][: max(0, SCORED - len(both))]
        rows.sort(key=lambda r: r[1], reverse=True)
        return [(int(r[0]), float(r[1])) for r in rows[:limit]], evidence

    def _frequencies(self, terms: list[str]) -> dict[str, int]:
        """In how many chunks each query term appears (0: unknown). An identifier counts as its rarest word."""
        parts = sorted({part for term in terms for part in term.split()})
        marks = ",".join("?" * len(parts))
        found = dict(self._db.execute(f"SELECT term, df FROM terms WHERE term IN ({marks})", parts).fetchall())
        return {t: min(found.get(part, 0) for part in t.split()) for t in terms}

    def _count(self, text: str, delta: int) -> None:
        self._db.executemany(
            "INSERT INTO terms (term, df) VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
            [(word, delta) for word in words(text)],
        )

    def _scored(self, expression: str) -> list[tuple[int, float]]:
        """BM25 for at most SCORED matches. `ORDER BY rank` would score every match, and a query of
        frequent words matches most of a large base (BM25 costs ~8 µs a row: 0.8 s at 100k chunks)."""
        return self._db.execute(
            "SELECT rowid, -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?", (expression, SCORED)
        ).fetchall()

"""The knowledge base: large material, looked up when needed, with hybrid retrieval.

Documents are cut into chunks (chunking.py) and indexed twice: SQLite FTS5 with BM25 over stemmed words
and two-character windows of Chinese (terms.py), and a faiss inner-product index over normalized
embeddings. `search` fuses the two rankings (fusion.py; by default the scores combined convexly, meaning
0.6 / keyword 0.4, each arm's scores scaled to 0…1 — chosen on the tune half of the labelled set, reported
on its test half in bench/RESULTS.md), keeps the best hit per (document, start line), cuts below a threshold
and returns the top K, each with its citation.

Keyword search works as soon as the text is in; embeddings are computed by `embed_pending` (a worker
calls it in the background, batched, cached by content hash), and hybrid search uses whatever is
embedded so far. Re-adding an unchanged document does nothing; a changed one replaces its chunks.

Backends: `KnowledgeBase.in_memory()` (SQLite in memory, faiss in memory) and `KnowledgeBase.open(dir)`
(`kb.sqlite` plus `vectors.faiss`, written by `save()`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

import faiss
import numpy as np

from orkas.core.fsutil import fsync_dir
from orkas.engine.memory import fusion as fusions
from orkas.engine.memory import vectors
from orkas.engine.memory.chunking import CHUNK_TOKENS, OVERLAP_LINES, chunk_text
from orkas.engine.memory.embedders import Embedder
from orkas.engine.memory.fusion import KeywordEvidence, Ranking, fuse
from orkas.engine.memory.keyword_index import KeywordIndex
from orkas.engine.memory.sources import SUPPORTED, extract
from orkas.engine.memory.vectors import APPROXIMATE_AT
from orkas.engine.sandbox import PathDenied, PathPolicy

log = logging.getLogger(__name__)

Mode = Literal["hybrid", "keyword", "vector"]
Progress = Callable[[int, int, str], None]  # (files done, files in all, the file just done)
CANDIDATES = 50  # per arm, before fusion

SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (id TEXT PRIMARY KEY, source TEXT NOT NULL, hash TEXT NOT NULL, added REAL NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY, doc_id TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    text TEXT NOT NULL, hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS embeddings (
    hash TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (hash, model));
CREATE TABLE IF NOT EXISTS indexed (chunk_id INTEGER PRIMARY KEY, model TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class Hit:
    doc_id: str
    source: str
    start_line: int
    end_line: int
    score: float
    text: str

    @property
    def citation(self) -> str:
        return f"{self.source}:{self.start_line}-{self.end_line}"


class Rankings(NamedTuple):
    vector: Ranking
    keyword: Ranking
    evidence: KeywordEvidence | None


@dataclass(slots=True)
class FolderReport:
    added: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: list[tuple[str, str]] | None = None


def _files_under(root: Path) -> list[Path]:
    """Supported files under `root`, hidden parts skipped, symlinked folders not followed."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found += [
            Path(dirpath) / name
            for name in sorted(filenames)
            if not name.startswith(".") and Path(name).suffix.lower() in SUPPORTED
        ]
    return found


def _embedder(choice: Embedder | Literal["bundled"] | None) -> Embedder | None:
    if choice == "bundled":
        from orkas.engine.memory.embedders import default_embedder

        return default_embedder()
    return choice


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class KnowledgeBase:
    def __init__(
        self,
        db: str,
        *,
        embedder: Embedder | None = None,
        vectors_path: Path | None = None,
        fusion: fusions.Setting = fusions.DEFAULT,  # how the two rankings become one (bench/retrieval_quality.py)
        chunk_tokens: int = CHUNK_TOKENS,
        overlap_lines: int = OVERLAP_LINES,
        approximate_at: int = APPROXIMATE_AT,
        seed: Path | None = None,
    ) -> None:
        """`seed`: vectors computed in advance for texts every install indexes alike (the bundled skills),
        a JSON file {model: {chunk hash: base64 float32}} (`write_seed`); a chunk found there is not embedded."""
        self.embedder = embedder
        self.seed = seed
        self._seeded: dict[str, dict[str, str]] | None = None
        self.approximate_at = approximate_at
        self.vectors_path = vectors_path
        self.fusion = fusion
        self.chunk_tokens = chunk_tokens
        self.overlap_lines = overlap_lines
        self._lock = threading.RLock()
        self._db = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
        if db != ":memory:":
            # WAL + NORMAL: a crash of the app loses nothing committed; a power cut may lose the last
            # commits of an index that can be rebuilt from its sources. Commits stay cheap.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self._words = KeywordIndex(self._db)
        self._words.ready(self._transaction)
        self._index = self._load_vectors()

    @classmethod
    def in_memory(cls, embedder: Embedder | Literal["bundled"] | None = "bundled", **options: Any) -> KnowledgeBase:
        """A base in memory. By default it embeds with the bundled model (hashing where that cannot run) and
        fuses as the product does, so it ranks as the product ranks; `embedder=None` asks for keyword search only."""
        return cls(":memory:", embedder=_embedder(embedder), **options)

    @classmethod
    def open(
        cls, folder: Path, embedder: Embedder | Literal["bundled"] | None = "bundled", **options: Any
    ) -> KnowledgeBase:
        """A base in `folder` (kb.sqlite, vectors.faiss), with the same defaults as `in_memory`."""
        folder.mkdir(parents=True, exist_ok=True)
        return cls(
            str(folder / "kb.sqlite"), embedder=_embedder(embedder), vectors_path=folder / "vectors.faiss", **options
        )

    # ---- adding and removing ----
    def add_text(self, doc_id: str, text: str, *, source: str | None = None) -> int:
        """Index `text` as document `doc_id`; returns the chunks written (0 when unchanged)."""
        digest = content_hash(text)
        with self._lock:
            row = self._db.execute("SELECT hash FROM docs WHERE id = ?", (doc_id,)).fetchone()
            if row is not None and row[0] == digest:
                return 0
            chunks = chunk_text(text, max_tokens=self.chunk_tokens, overlap_lines=self.overlap_lines)
            with self._transaction():
                self._delete_chunks(doc_id)
                self._db.execute(
                    "INSERT OR REPLACE INTO docs (id, source, hash, added) VALUES (?, ?, ?, ?)",
                    (doc_id, source or doc_id, digest, time.time()),
                )
                for chunk in chunks:
                    cursor = self._db.execute(
                        "INSERT INTO chunks (doc_id, start_line, end_line, text, hash) VALUES (?, ?, ?, ?, ?)",
                        (doc_id, chunk.start_line, chunk.end_line, chunk.text, content_hash(chunk.text)),
                    )
                    self._words.add(int(cursor.lastrowid or 0), chunk.text)
            return len(chunks)

    def add_file(self, path: Path, *, policy: PathPolicy) -> int:
        """Index one file, read through `policy` (see `PathPolicy.source`). Raises `ValueError` for a file the
        policy refuses (a link out of the source, another name of a protected file)."""
        try:
            resolved = policy.check(path, write=False)
        except PathDenied as e:
            raise ValueError(f"{path.name}: not read ({e.reason})") from None
        return self.add_text(str(resolved), extract(resolved, policy), source=str(resolved))

    def add_folder(self, folder: Path, progress: Progress | None = None, *, policy: PathPolicy) -> FolderReport:
        """Index every supported file under `folder`; files gone since the last time are removed.
        Symlinked folders are not followed and every file is read through `policy`, so a link inside the
        folder cannot lead out of it. `progress(done, total, path)` is called after each file."""
        report = FolderReport(failed=[])
        root = policy.check(folder, write=False)
        files = _files_under(root)
        seen: set[str] = set()
        for done, path in enumerate(files, start=1):
            seen.add(str(path))
            try:
                if self.add_file(path, policy=policy):
                    report.added += 1
                else:
                    report.unchanged += 1
            except (OSError, ValueError) as e:
                assert report.failed is not None
                report.failed.append((str(path), str(e)))
            if progress is not None:
                progress(done, len(files), str(path))
        prefix = str(root) + "/"
        for doc_id in [d["id"] for d in self.documents() if d["id"].startswith(prefix) and d["id"] not in seen]:
            self.remove(doc_id)
            report.removed += 1
        return report

    def remove(self, doc_id: str) -> bool:
        with self._transaction():
            self._delete_chunks(doc_id)
            gone = self._db.execute("DELETE FROM docs WHERE id = ?", (doc_id,)).rowcount
        return bool(gone)

    def document_ids(self, prefix: str) -> list[str]:
        """The ids of the documents whose id starts with `prefix` (exactly, case included), oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM docs WHERE substr(id, 1, ?) = ? ORDER BY added, id", (len(prefix), prefix)
            ).fetchall()
        return [r[0] for r in rows]

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """Several statements committed as one, or rolled back whole on any error."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _delete_chunks(self, doc_id: str) -> None:
        rows = self._db.execute("SELECT id, text FROM chunks WHERE doc_id = ?", (doc_id,)).fetchall()
        for chunk_id, text in rows:
            self._words.remove(chunk_id, text)
        if rows:
            ids = np.asarray([r[0] for r in rows], dtype=np.int64)
            if self._index is not None:
                self._index.remove_ids(ids)  # type: ignore[arg-type]  # faiss takes arrays too
            self._db.execute(f"DELETE FROM indexed WHERE chunk_id IN ({','.join('?' * len(ids))})", ids.tolist())
        self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))

    # ---- reading ----
    def documents(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT d.id, d.source, d.added, COUNT(c.id) FROM docs d LEFT JOIN chunks c ON c.doc_id = d.id "
                "GROUP BY d.id ORDER BY d.added"
            ).fetchall()
        return [{"id": r[0], "source": r[1], "added": r[2], "chunks": r[3]} for r in rows]

    def read(self, doc_id: str, start_line: int = 1, end_line: int | None = None) -> str:
        """A document's text by line range, rebuilt from its chunks (overlaps merged)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT start_line, end_line, text FROM chunks WHERE doc_id = ? ORDER BY start_line", (doc_id,)
            ).fetchall()
        if not rows:
            raise KeyError(doc_id)
        lines: dict[int, str] = {}
        for start, _end, text in rows:
            for offset, line in enumerate(text.split("\n")):
                lines.setdefault(start + offset, line)
        last = end_line or max(lines)
        return "\n".join(lines.get(n, "") for n in range(start_line, last + 1))

    def vector_index(self) -> dict[str, Any]:
        """What the vector arm is: `exact` or `approximate` (inverted lists), how many vectors it holds,
        and for an approximate index how many lists it was trained with."""
        with self._lock:
            index = self._index
        if index is None:
            return {"kind": "none", "vectors": 0, "lists": 0}
        lists = int(getattr(index, "nlist", 0))
        return {"kind": "approximate" if lists else "exact", "vectors": int(index.ntotal), "lists": lists}

    def pending(self) -> int:
        """Chunks not yet in the vector index (0 without an embedder)."""
        if self.embedder is None:
            return 0
        with self._lock:
            return int(
                self._db.execute(
                    "SELECT COUNT(*) FROM chunks c LEFT JOIN indexed i ON i.chunk_id = c.id WHERE i.chunk_id IS NULL"
                ).fetchone()[0]
            )

    # ---- embeddings ----
    def embed_pending(self, batch: int = 16, limit: int | None = None, *, refine: bool = True) -> int:
        """Embed waiting chunks, `batch` at a time (cached by content hash); returns how many were indexed.
        With a first tier (an embedder's `first_tier()`: the same model on each chunk's head, ~2× faster) every
        chunk gets its first-tier vector first — meaning search covers everything soon — and then, with
        `refine`, its full vector replaces it."""
        done = 0
        while limit is None or done < limit:
            step = self._embed_step(batch, refine)
            if not step:
                break
            done += step
        return done

    def refining(self) -> int:
        """Chunks searchable by meaning through their first-tier vector, waiting for the full one."""
        with self._lock:
            first = self._first_tier_name()
            if first is None:
                return 0
            return int(self._db.execute("SELECT COUNT(*) FROM indexed WHERE model = ?", (first,)).fetchone()[0])

    def _first_tier_name(self) -> str | None:
        first = self._first_tier()
        return first.name if first is not None else None

    def _first_tier(self) -> Embedder | None:
        make = getattr(self.embedder, "first_tier", None)
        return make() if callable(make) else None

    def _embed_step(self, batch: int, refine: bool) -> int:
        """One batch: chunks without a vector (first tier if there is one), else — refining — chunks whose
        vector is the first tier's. Returns how many chunks it handled (0: nothing left to do)."""
        with self._lock:
            embedder, index = self.embedder, self._index  # the pair, as one (see use_embedder)
            if embedder is None or index is None:
                return 0
            first = self._first_tier()
            rows = self._db.execute(
                "SELECT c.id, c.text, c.hash FROM chunks c LEFT JOIN indexed i ON i.chunk_id = c.id "
                "WHERE i.chunk_id IS NULL ORDER BY c.id LIMIT ?",
                (batch,),
            ).fetchall()
            tier, replacing = (first or embedder), False
            if not rows and refine and first is not None:
                rows = self._db.execute(
                    "SELECT c.id, c.text, c.hash FROM chunks c JOIN indexed i ON i.chunk_id = c.id "
                    "WHERE i.model = ? ORDER BY c.id LIMIT ?",
                    (first.name, batch),
                ).fetchall()
                tier, replacing = embedder, True
            if not rows:
                return 0
            # A chunk the first tier sees whole gets the full vector already: it is never refined.
            covers = getattr(tier, "covers", None) if tier is first else None
            model = {r[0]: embedder.name if covers is not None and covers(r[1]) else tier.name for r in rows}
            cached = {}
            for name in set(model.values()):
                cached.update(self._cached(name, [r[2] for r in rows if model[r[0]] == name]))
        missing = [r for r in rows if r[2] not in cached]
        if missing:  # the slow part, outside the lock: searches go on meanwhile
            vectors = tier.passages([r[1] for r in missing])
            for row, vector in zip(missing, vectors, strict=True):
                cached[row[2]] = vector
        with self._lock:
            for row in missing:
                self._db.execute(
                    "INSERT OR IGNORE INTO embeddings (hash, model, vector) VALUES (?, ?, ?)",
                    (row[2], model[row[0]], cached[row[2]].tobytes()),
                )
            if self._index is not index:
                return len(rows)  # the embedder was changed meanwhile: these vectors are cached, not indexed
            alive = {r[0] for r in self._db.execute(
                f"SELECT id FROM chunks WHERE id IN ({','.join('?' * len(rows))})", [r[0] for r in rows]
            )}  # fmt: skip
            fresh = [r for r in rows if r[0] in alive]  # a document removed meanwhile stays removed
            if fresh:
                ids = np.asarray([r[0] for r in fresh], dtype=np.int64)
                if replacing:  # the full vector takes the first tier's place
                    index.remove_ids(ids)  # type: ignore[arg-type]  # faiss takes an id array
                index.add_with_ids(np.stack([cached[r[2]] for r in fresh]), ids)
                self._db.executemany(
                    "INSERT OR REPLACE INTO indexed (chunk_id, model) VALUES (?, ?)",
                    [(r[0], model[r[0]]) for r in fresh],
                )
                self._grow()
        return len(rows)

    def use_embedder(self, embedder: Embedder | None) -> None:
        """Switch to another embedder (or none: keyword search only). The vector index is rebuilt from
        the cache for the new model; what it has not embedded yet becomes pending."""
        with self._lock:
            self.embedder = embedder
            self._index = self._load_vectors()

    def _cached(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        if not hashes:
            return {}
        rows = self._db.execute(
            f"SELECT hash, vector FROM embeddings WHERE model = ? AND hash IN ({','.join('?' * len(hashes))})",
            [model, *hashes],
        ).fetchall()
        found = {h: np.frombuffer(v, dtype=np.float32) for h, v in rows}
        seeded = self._seed().get(model, {})
        for digest in (h for h in hashes if h not in found and h in seeded):
            vector = base64.b64decode(seeded[digest])
            self._db.execute("INSERT OR IGNORE INTO embeddings (hash, model, vector) VALUES (?, ?, ?)",
                             (digest, model, vector))  # fmt: skip
            found[digest] = np.frombuffer(vector, dtype=np.float32)
        return found

    def _seed(self) -> dict[str, dict[str, str]]:
        if self._seeded is None:
            self._seeded = {}
            if self.seed is not None:
                try:
                    self._seeded = json.loads(self.seed.read_text())
                except (OSError, ValueError):  # a missing or damaged seed only costs the embedding it saved
                    log.warning("the vectors in %s could not be read; embedding instead", self.seed)
        return self._seeded

    def write_seed(self, path: Path) -> int:
        """Write every cached vector as a seed file (see `seed`); returns how many."""
        with self._lock:
            rows = self._db.execute("SELECT model, hash, vector FROM embeddings ORDER BY model, hash").fetchall()
        seed: dict[str, dict[str, str]] = {}
        for model, digest, vector in rows:
            seed.setdefault(model, {})[digest] = base64.b64encode(vector).decode()
        path.write_text(json.dumps(seed, indent=0, sort_keys=True) + "\n")
        return len(rows)

    # ---- search ----
    def search(
        self,
        query: str,
        k: int = 10,
        mode: Mode = "hybrid",
        *,
        min_score: float = 0.0,
        fusion: fusions.Setting | None = None,
    ) -> list[Hit]:
        """The `k` best passages. `fusion` overrides this base's setting for one search (the benchmark
        compares settings through here)."""
        if mode not in ("hybrid", "keyword", "vector"):
            raise ValueError(f"mode must be hybrid, keyword or vector, not {mode!r}")
        if mode == "vector" and self.embedder is None:
            raise ValueError(
                "vector search needs an embedder, and this knowledge base has none: pass one, or search by keyword"
            )
        arms = self.rankings(query, mode=mode)
        if mode == "keyword":
            scored = list(arms.keyword)
        elif mode == "vector":
            scored = list(arms.vector)
        else:
            scored = fuse(arms.vector, arms.keyword, fusion or self.fusion, arms.evidence)
        return self._hits(scored, k, min_score)

    def rankings(self, query: str, limit: int = CANDIDATES, mode: Mode = "hybrid") -> Rankings:
        """Each arm's own ranking of chunk ids, before fusion (what `search` fuses), and what the keyword
        arm knew of the query's words."""
        keyword: list[tuple[int, float]] = []
        evidence = None
        if mode != "vector":
            with self._lock:
                keyword, evidence = self._words.search(query, limit)
        vector = self._vector(query, limit) if mode != "keyword" else []
        return Rankings(vector, keyword, evidence)

    def chunk_documents(self) -> dict[int, str]:
        """Which document each chunk id belongs to (for reading `rankings`)."""
        with self._lock:
            return dict(self._db.execute("SELECT id, doc_id FROM chunks").fetchall())

    def stored_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Every indexed chunk's vector with its chunk id (for measuring the vector index against exact search)."""
        with self._lock:
            return self._cached_vectors()

    def _hits(self, scored: Iterable[tuple[int, float]], k: int, min_score: float) -> list[Hit]:
        hits: list[Hit] = []
        seen: set[tuple[str, int]] = set()
        with self._lock:
            for chunk_id, score in scored:
                if score < min_score:
                    break
                row = self._db.execute(
                    "SELECT c.doc_id, d.source, c.start_line, c.end_line, c.text FROM chunks c "
                    "JOIN docs d ON d.id = c.doc_id WHERE c.id = ?",
                    (chunk_id,),
                ).fetchone()
                if row is None or (row[0], row[2]) in seen:
                    continue
                seen.add((row[0], row[2]))
                hits.append(Hit(row[0], row[1], row[2], row[3], float(score), row[4]))
                if len(hits) >= k:
                    break
        return hits

    def _vector(self, query: str, limit: int) -> list[tuple[int, float]]:
        with self._lock:  # the pair, as one: the embedder may be switched meanwhile
            embedder, index = self.embedder, self._index
        if embedder is None or index is None or index.ntotal == 0:
            return []
        vector = embedder.query(query).reshape(1, -1)
        with self._lock:
            scores, ids = index.search(vector, min(limit, index.ntotal))
        found = [(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]
        return sorted(found, key=lambda hit: (-hit[1], hit[0]))  # exact ties (identical passages): older first

    # ---- persistence ----
    def _load_vectors(self) -> faiss.Index | None:
        if self.embedder is None:
            return None
        meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        if self.vectors_path is not None and self.vectors_path.exists() and meta.get("model") == self.embedder.name:
            loaded = faiss.read_index(str(self.vectors_path))
            if loaded.ntotal == self._db.execute("SELECT COUNT(*) FROM indexed").fetchone()[0]:
                return vectors.with_probes(loaded)
        # No file, another model, or out of step (a crash between writes): rebuild from the cache.
        models = [self.embedder.name, *filter(None, [self._first_tier_name()])]
        self._db.execute(f"DELETE FROM indexed WHERE model NOT IN ({','.join('?' * len(models))})", models)
        stored, ids = self._cached_vectors()
        if not len(ids):
            self._db.execute("DELETE FROM indexed")
            return vectors.exact(self.embedder.dim)
        return vectors.build(stored, ids, approximate_at=self.approximate_at)

    def _cached_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """The vectors of every indexed chunk, from the embedding cache, with their chunk ids."""
        rows = self._db.execute(
            "SELECT i.chunk_id, e.vector FROM indexed i JOIN chunks c ON c.id = i.chunk_id "
            "JOIN embeddings e ON e.hash = c.hash AND e.model = i.model"
        ).fetchall()
        ids = np.asarray([r[0] for r in rows], dtype=np.int64)
        if not rows:
            return np.zeros((0, 0), dtype=np.float32), ids
        # chunks whose cached vector is gone are not in the index any more: embed_pending takes them again
        self._db.execute(f"DELETE FROM indexed WHERE chunk_id NOT IN ({','.join('?' * len(ids))})", ids.tolist())
        return np.stack([np.frombuffer(v, dtype=np.float32) for _, v in rows]), ids

    def _grow(self) -> None:
        """Rebuild the vector index when the base has outgrown it (vectors.outgrown)."""
        if self._index is None or not vectors.outgrown(self._index, self.approximate_at):
            return
        count = self._index.ntotal
        stored, ids = self._cached_vectors()
        self._index = vectors.build(stored, ids, approximate_at=self.approximate_at)
        assert self._index.ntotal == count

    def save(self) -> None:
        """Write the vector index next to the database (temp file, fsync, rename)."""
        if self.vectors_path is None or self._index is None or self.embedder is None:
            return
        with self._lock:
            temporary = self.vectors_path.with_suffix(".faiss.tmp")
            faiss.write_index(self._index, str(temporary))
            with open(temporary, "rb+") as handle:
                os.fsync(handle.fileno())
            temporary.replace(self.vectors_path)
            fsync_dir(self.vectors_path.parent)
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('model', ?)", (self.embedder.name,))

    def close(self) -> None:
        self.save()
        with self._lock:
            self._db.close()

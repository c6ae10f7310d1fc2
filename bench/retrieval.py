"""Knowledge-base speed at 100k chunks of 384 dimensions, side by side with sqlite-vec.

Builds a persistent `KnowledgeBase` of synthetic chunks (English with a Zipf-like vocabulary, one in
five Chinese), then measures:

- dense top-10: faiss exact (`IndexFlatIP`, what the knowledge base uses) and HNSW (M=32, efSearch 64)
  with its recall@10 against exact, beside sqlite-vec's brute-force `vec0` scan on the same vectors;
- keyword top-10 (FTS5 BM25 over stemmed words and Chinese character pairs) over a query log with rare
  words, identifiers, Chinese and frequent-word queries;
- a whole hybrid query, including embedding the query with the bundled model (E5);
- indexing throughput: chunks per second into FTS5, and E5 passages per second on this machine.

The corpus vectors are synthetic unit vectors clustered around 2,000 topics, and queries lie near
documents (embedding 100k chunks with E5 here would take hours: see the throughput line); speed does
not depend on what the vectors mean, approximate recall does somewhat. Quality is measured separately.

    .venv/bin/python -m bench.retrieval [--chunks 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import faiss
import numpy as np

from orkas.engine.memory import vectors as vector_index
from orkas.engine.memory.embedders import E5Embedder, HashingEmbedder
from orkas.engine.memory.kb import KnowledgeBase

WORDS = (
    "system data process report customer invoice ledger deploy release config service request response error "
    "timeout retry cache index search query vector keyword memory session budget policy refund shipping order "
    "warehouse payment schedule meeting decision convention migration database backup restore network security "
    "token model provider agent tool folder document chapter contract clause tenant region latency throughput"
).split()
RARE = [f"{a}{b}" for a in ("zor", "vex", "kal", "mur", "tesh", "quin") for b in ("ax", "ium", "ology", "ette", "ard")]
CHINESE = "知识库混合检索关键词向量排名融合数据库备份恢复网络安全发票客户订单仓库支付会议决定迁移"


def sentence(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return "".join(rng.choice(CHINESE) for _ in range(rng.randint(20, 60))) + "。"
    words = [WORDS[min(int(rng.paretovariate(1.2)) - 1, len(WORDS) - 1)] for _ in range(rng.randint(8, 18))]
    if rng.random() < 0.05:
        words.append(rng.choice(RARE))
    if rng.random() < 0.05:
        words.append(f"ERR_{rng.randint(1000, 9999)}")
    return " ".join(words).capitalize() + "."


def queries(rng: random.Random, n: int) -> list[str]:
    log = []
    for i in range(n):
        kind = i % 5
        if kind == 0:
            log.append(" ".join(rng.sample(WORDS[:6], 3)))  # frequent words only: the slow case for BM25
        elif kind == 1:
            log.append(rng.choice(RARE))
        elif kind == 2:
            log.append(f"ERR_{rng.randint(1000, 9999)}")
        elif kind == 3:
            log.append("".join(rng.choice(CHINESE) for _ in range(4)))
        else:
            log.append(" ".join(rng.sample(WORDS, 4)))
    return log


def clustered(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Unit vectors around 2,000 topics: closer to real embeddings than uniform noise (on which
    approximate indexes look far worse than they are)."""
    centres = rng.standard_normal((2000, dim)).astype(np.float32)
    vectors = centres[rng.integers(0, 2000, n)] + rng.standard_normal((n, dim)).astype(np.float32) * 0.6
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def timed(fn, items) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - start) * 1000)
    return out


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    dim = 384

    with tempfile.TemporaryDirectory() as folder:
        kb = KnowledgeBase.open(Path(folder) / "kb", embedder=HashingEmbedder(dim))
        texts = [" ".join(sentence(rng) for _ in range(rng.randint(2, 4))) for _ in range(args.chunks)]
        start = time.perf_counter()
        for number, text in enumerate(texts):  # each text is under a chunk's size: one chunk per document
            kb.add_text(f"doc-{number}", text)
        index_seconds = time.perf_counter() - start
        chunk_ids = [r[0] for r in kb._db.execute("SELECT id FROM chunks ORDER BY id")]
        vectors = clustered(np.random.default_rng(7), len(chunk_ids), dim)
        start = time.perf_counter()
        kb._index = vector_index.build(vectors, np.asarray(chunk_ids, dtype=np.int64))  # what embedding builds
        ivf_build = time.perf_counter() - start
        print(f"corpus: {len(chunk_ids):,} chunks; keyword indexing {len(chunk_ids) / index_seconds:,.0f} chunks/s")

        e5 = E5Embedder()
        sample = texts[:64]
        start = time.perf_counter()
        e5.passages(sample)
        rate = len(sample) / (time.perf_counter() - start)
        print(
            f"E5 passages on this machine: {rate:.1f} chunks/s (all {len(chunk_ids):,} would take "
            f"{len(chunk_ids) / rate / 3600:.1f} h)"
        )

        picks = np.random.default_rng(8).choice(len(vectors), args.queries, replace=False)
        noise = np.random.default_rng(9).standard_normal((args.queries, dim)).astype(np.float32) * 0.04
        query_vectors = vectors[picks] + noise  # queries near documents, as real ones are
        query_vectors /= np.linalg.norm(query_vectors, axis=1, keepdims=True)
        flat = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        flat.add_with_ids(vectors, np.asarray(chunk_ids, dtype=np.int64))
        dense = timed(lambda q: flat.search(q.reshape(1, -1), 10), query_vectors)
        exact = flat.search(query_vectors, 10)[1]
        ivf = kb._index
        ivf_times = timed(lambda q: ivf.search(q.reshape(1, -1), 10), query_vectors)
        ivf_found = ivf.search(query_vectors, 10)[1]
        ivf_recall = np.mean([len(set(ivf_found[i]) & set(exact[i])) / 10 for i in range(args.queries)])

        hnsw = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
        start = time.perf_counter()
        hnsw.add(vectors)
        hnsw_build = time.perf_counter() - start
        hnsw.hnsw.efSearch = 64
        approx = timed(lambda q: hnsw.search(q.reshape(1, -1), 10), query_vectors)
        found = hnsw.search(query_vectors, 10)[1]
        ids = np.asarray(chunk_ids)
        recall = np.mean([len(set(ids[found[i]]) & set(exact[i])) / 10 for i in range(args.queries)])

        import pysqlite3
        import sqlite_vec

        vec_db = pysqlite3.connect(":memory:")
        vec_db.enable_load_extension(True)
        sqlite_vec.load(vec_db)
        vec_db.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{dim}] distance_metric=cosine)")
        vec_db.executemany(
            "INSERT INTO v (rowid, embedding) VALUES (?, ?)",
            ((int(i), v.tobytes()) for i, v in zip(ids, vectors, strict=True)),
        )
        sqlite_times = timed(
            lambda q: vec_db.execute(
                "SELECT rowid FROM v WHERE embedding MATCH ? AND k = 10 ORDER BY distance", (q.tobytes(),)
            ).fetchall(),
            query_vectors[:50],
        )

        log = queries(rng, args.queries)
        keyword = timed(lambda q: kb.search(q, 10, "keyword"), log)
        frequent = [t for i, t in enumerate(keyword) if i % 5 == 0]
        kb.embedder = e5  # the real model embeds the query; corpus vectors are random (see above)
        hybrid = timed(lambda q: kb.search(q, 10, "hybrid"), log)

        print(f"\n{'top-10 query, ms':46} {'p50':>7} {'p95':>7}")
        print(
            f"{'dense, the knowledge base (faiss IVF)':46} {pct(ivf_times, 50):7.2f} {pct(ivf_times, 95):7.2f}"
            f"   recall@10 {ivf_recall:.3f}, built in {ivf_build:.0f} s"
        )
        print(f"{'dense, faiss exact (FlatIP)':46} {pct(dense, 50):7.2f} {pct(dense, 95):7.2f}")
        print(
            f"{'dense, faiss HNSW M=32 ef=64':46} {pct(approx, 50):7.2f} {pct(approx, 95):7.2f}"
            f"   recall@10 {recall:.3f}, built in {hnsw_build:.0f} s"
        )
        print(f"{'dense, sqlite-vec vec0 (baseline)':46} {pct(sqlite_times, 50):7.2f} {pct(sqlite_times, 95):7.2f}")
        print(f"{'keyword, FTS5 BM25 (all queries)':46} {pct(keyword, 50):7.2f} {pct(keyword, 95):7.2f}")
        print(f"{'keyword, frequent-word queries only':46} {pct(frequent, 50):7.2f} {pct(frequent, 95):7.2f}")
        print(f"{'hybrid incl. E5 query embedding':46} {pct(hybrid, 50):7.2f} {pct(hybrid, 95):7.2f}")
        print(
            f"\nratio sqlite-vec / knowledge base (p50): {pct(sqlite_times, 50) / pct(ivf_times, 50):.0f}x; "
            f"sqlite-vec / faiss exact: {pct(sqlite_times, 50) / pct(dense, 50):.1f}x"
        )
        kb._db.close()


if __name__ == "__main__":
    main()

"""Recall of the knowledge base's inverted-file index on real embeddings, at the size it switches on.

The speed benchmark (bench/retrieval.py) uses synthetic clustered vectors, on which approximate search
looks better than it is, and the quality benchmark has only ~1,600 real vectors. This one embeds the
Python standard library's own source with the bundled model (E5), chunked as the knowledge base chunks
it — 20,000 chunks, about 40 minutes on two cores the first time, cached in bench/.cache after —
then builds the index the knowledge base would build and compares its top 10 with exact search.

    .venv/bin/python -m bench.ivf_recall [--chunks 20000] [--queries 500]
"""

from __future__ import annotations

import argparse
import sysconfig
import time
from pathlib import Path

import faiss
import numpy as np

from orkas.engine.memory import vectors
from orkas.engine.memory.embedders import E5Embedder
from orkas.engine.memory.kb import KnowledgeBase
from orkas.engine.sandbox import PathPolicy

HERE = Path(__file__).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args()
    kb = KnowledgeBase.open(HERE / ".cache" / "stdlib-kb", embedder=E5Embedder(), approximate_at=10**9)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    policy = PathPolicy.source(stdlib, home="/nonexistent")  # the stdlib may sit under a pyenv in the home folder
    total = kb._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    for path in sorted(stdlib.rglob("*.py")):
        if total >= args.chunks:
            break
        if "test" in path.relative_to(stdlib).parts[0]:
            continue  # the test suites: repetitive, and not what people keep in a knowledge base
        try:
            total += kb.add_file(path, policy=policy)
        except (OSError, ValueError):
            continue
    pending = kb.pending()
    if pending:
        print(f"embedding {pending:,} chunks with E5 (cached for later runs)…", flush=True)
        start = time.perf_counter()
        while kb.embed_pending(batch=32, limit=1024):
            kb.save()
            done = pending - kb.pending()
            rate = done / (time.perf_counter() - start)
            print(f"  {done:,}/{pending:,} ({rate:.1f}/s)", flush=True)
    stored, ids = kb.stored_vectors()
    print(f"{len(stored):,} real E5 vectors of {stdlib.name} source chunks")

    rng = np.random.default_rng(0)
    probes = stored[rng.choice(len(stored), min(args.queries, len(stored)), replace=False)]
    exact = vectors.exact(stored.shape[1])
    exact.add_with_ids(stored, ids)
    _, truth = exact.search(probes, 11)
    approximate = vectors.build(stored, ids, approximate_at=0)
    assert isinstance(approximate, faiss.IndexIVF)
    default = approximate.nprobe
    print(f"inverted file: {approximate.nlist} lists; the knowledge base probes {default}")
    for nprobe in sorted({max(1, approximate.nlist // 40), approximate.nlist // 20, default, approximate.nlist // 5}):
        approximate.nprobe = nprobe
        start = time.perf_counter()
        _, got = approximate.search(probes, 11)
        ms = (time.perf_counter() - start) * 1000 / len(probes)
        # each probe is a stored chunk: it finds itself; recall is over its 10 nearest others
        recall = np.mean([len(set(t[1:]) & set(g)) / 10 for t, g in zip(truth, got, strict=True)])
        mark = "  <- default" if nprobe == default else ""
        print(f"  {nprobe:4} probed: recall@10 {recall:.3f}, {ms:.2f} ms per query{mark}")
    kb.close()


if __name__ == "__main__":
    main()

"""Retrieval quality: keyword, dense and hybrid on a labelled set, side by side.

Corpus: the docstrings of ~100 standard-library modules (English, one document per function or class)
plus 60 short Chinese workplace passages (bench/data/zh_passages.tsv). Queries (bench/data/
retrieval_queries.tsv, 156: 103 English, 53 Chinese) are labelled with their relevant documents;
"known" queries share words with their target, "topical" ones describe it in other words.

Metrics per query over documents (a document counts once, at its best chunk): nDCG@10 with binary
relevance and recall@20, averaged per slice. Embeddings are the bundled model (E5), cached in
bench/.cache so later runs are fast.

    .venv/bin/python -m bench.retrieval_quality
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import math
import statistics
import warnings
from pathlib import Path

import numpy as np

from bench import zh_records
from orkas.engine.memory import vectors
from orkas.engine.memory.embedders import E5Embedder
from orkas.engine.memory.kb import KnowledgeBase

HERE = Path(__file__).parent
MODULES = (
    "os os.path shutil pathlib json csv re math statistics random datetime time collections itertools functools "
    "heapq bisect string textwrap difflib hashlib hmac secrets base64 zlib gzip bz2 lzma zipfile tarfile tempfile "
    "glob fnmatch subprocess shlex socket ssl urllib.parse urllib.request http.client email.utils uuid decimal "
    "fractions operator copy pprint enum dataclasses contextlib threading queue asyncio sqlite3 logging argparse "
    "getpass platform locale calendar unicodedata struct array io pickle configparser html "
    "xml.etree.ElementTree ipaddress mimetypes wave colorsys inspect traceback warnings weakref gc timeit"
).split()


def stdlib_documents() -> dict[str, str]:
    """One document per public function or class, credited to the module it belongs to (statistics
    re-exports functools.reduce and collections.Counter: those stay under functools and collections)."""
    found: dict[str, list[tuple[str, str, str]]] = {}  # docstring -> [(module, attribute, text)]
    homes: dict[str, str] = {}
    warnings.simplefilter("ignore")
    for name in MODULES:
        module = importlib.import_module(name)
        for attribute, obj in sorted(vars(module).items()):
            if attribute.startswith("_") or not (inspect.isroutine(obj) or inspect.isclass(obj)):
                continue
            doc = inspect.getdoc(obj)
            if not doc or len(doc) < 20:
                continue
            try:
                signature = str(inspect.signature(obj))
            except (TypeError, ValueError):
                signature = "(...)"
            found.setdefault(doc, []).append((name, attribute, f"{name}.{attribute}{signature}\n{doc}"))
            homes[doc] = (getattr(obj, "__module__", None) or "").lstrip("_")
    documents: dict[str, str] = {}
    for doc, places in found.items():
        home = homes[doc]
        best = next(
            (p for p in places if home in (p[0], p[0].split(".")[-1]) or home.startswith(p[0] + ".")),
            places[0],
        )
        documents[f"{best[0]}.{best[1]}"] = best[2]
    return documents


def chinese_documents() -> dict[str, str]:
    rows = (line.split("\t", 1) for line in (HERE / "data" / "zh_passages.tsv").read_text().splitlines() if line)
    return dict(rows) | dict(zh_records.records()[0])  # type: ignore[arg-type]


def labelled() -> list[tuple[str, str, str, set[str]]]:
    """(slice, kind, query, relevant documents): the hand-labelled file, then the generated records'."""
    rows = []
    for line in (HERE / "data" / "retrieval_queries.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            part, kind, query, relevant = line.split("\t")
            rows.append((part, kind, query, set(relevant.split(","))))
    return rows + [("zh", kind, query, relevant) for kind, query, relevant in zh_records.records()[1]]


def ndcg_at_10(ranked: list[str], relevant: set[str]) -> float:
    gain = sum(1 / math.log2(rank + 2) for rank, doc in enumerate(ranked[:10]) if doc in relevant)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(len(relevant), 10)))
    return gain / ideal


def recall_at_20(ranked: list[str], relevant: set[str]) -> float:
    return len(relevant & set(ranked[:20])) / len(relevant)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vector-weight", type=float, default=0.7)
    parser.add_argument("--keyword-weight", type=float, default=0.3)
    args = parser.parse_args()
    kb = KnowledgeBase.open(HERE / ".cache" / "quality-kb", embedder=E5Embedder())
    kb.weights = (args.vector_weight, args.keyword_weight)
    documents = {**stdlib_documents(), **chinese_documents()}
    for doc_id, text in documents.items():
        kb.add_text(doc_id, text)
    stale = {d["id"] for d in kb.documents()} - set(documents)
    for doc_id in stale:
        kb.remove(doc_id)
    pending = kb.pending()
    if pending:
        print(f"embedding {pending} chunks (cached for later runs)…", flush=True)
        kb.embed_pending(batch=32)
        kb.save()
    chunks = kb._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    queries = labelled()
    missing = {d for *_, relevant in queries for d in relevant} - set(documents)
    if missing:
        raise SystemExit(f"labels name documents that are not in the corpus: {sorted(missing)}")
    print(f"corpus: {len(documents):,} documents, {chunks:,} chunks; {len(queries)} labelled queries\n")

    scores: dict[tuple[str, str], list[tuple[str, str, float, float]]] = {}
    for mode in ("keyword", "vector", "hybrid"):
        for part, kind, query, relevant in queries:
            ranked: list[str] = []
            for hit in kb.search(query, k=60, mode=mode):  # type: ignore[arg-type]
                if hit.doc_id not in ranked:
                    ranked.append(hit.doc_id)
            scores.setdefault((mode, part), []).append(
                (kind, query, ndcg_at_10(ranked, relevant), recall_at_20(ranked, relevant))
            )

    def mean(mode: str, part: str | None, kind: str | None, metric: int) -> float:
        rows = [r for (m, p), rs in scores.items() if m == mode and (part is None or p == part) for r in rs]
        rows = [r for r in rows if kind is None or r[0] == kind]
        return statistics.fmean(r[metric] for r in rows)

    slices = [
        ("en", None),
        ("en", "known"),
        ("en", "topical"),
        ("zh", None),
        ("zh", "known"),
        ("zh", "topical"),
        (None, None),
    ]
    print(
        f"{'slice':18} {'queries':>7}   {'nDCG@10 keyword':>15} {'dense':>7} {'hybrid':>7}   "
        f"{'recall@20 keyword':>17} {'dense':>7} {'hybrid':>7}"
    )
    verdicts = []
    for part, kind in slices:
        label = f"{part or 'all'}{'/' + kind if kind else ''}"
        count = len([q for q in queries if (part is None or q[0] == part) and (kind is None or q[1] == kind)])
        n = [mean(m, part, kind, 2) for m in ("keyword", "vector", "hybrid")]
        r = [mean(m, part, kind, 3) for m in ("keyword", "vector", "hybrid")]
        print(f"{label:18} {count:7}   {n[0]:15.3f} {n[1]:7.3f} {n[2]:7.3f}   {r[0]:17.3f} {r[1]:7.3f} {r[2]:7.3f}")
        if kind is None:
            best = max(n[0], n[1])
            floor = best + (0.02 if part is None else -0.005)
            verdicts.append(
                f"{label}: hybrid {n[2]:.3f} vs best arm {best:.3f} (goal ≥ {floor:.3f}) "
                f"{'met' if n[2] >= floor else 'NOT met'}"
            )
    # the mean over queries leans on Chinese (most queries); the mean of the two languages weighs them alike
    macro = [statistics.fmean(mean(m, part, None, 2) for part in ("en", "zh")) for m in ("keyword", "vector", "hybrid")]
    verdicts.append(
        f"mean of the two languages: keyword {macro[0]:.3f}, dense {macro[1]:.3f}, hybrid {macro[2]:.3f} "
        f"(goal ≥ {max(macro[:2]) + 0.02:.3f}) {'met' if macro[2] >= max(macro[:2]) + 0.02 else 'NOT met'}"
    )
    print("\n" + "\n".join(verdicts))
    print(approximate_recall(kb, [q[2] for q in queries]))
    kb.close()


def approximate_recall(kb: KnowledgeBase, queries: list[str]) -> str:
    """Recall@10 of the inverted-file index against exact search on these real E5 vectors (the speed
    benchmark's are synthetic), built by the same rule the knowledge base uses from 20k chunks on."""
    assert kb.embedder is not None
    stored, ids = kb._cached_vectors()
    approximate = vectors.build(stored, ids, approximate_at=0)
    exact = vectors.build(stored, ids, approximate_at=len(stored) + 1)
    asked = np.stack([kb.embedder.query(q) for q in queries])
    found = 0
    for probe in (asked, stored):
        _, truth = exact.search(probe, 10)
        _, got = approximate.search(probe, 10)
        found += sum(len(set(t) & set(g)) for t, g in zip(truth, got, strict=True))
    total = 10 * (len(asked) + len(stored))
    return (
        f"inverted file on the real vectors ({len(stored):,}, {approximate.nlist} lists, {approximate.nprobe} probed): "
        f"recall@10 {found / total:.3f} against exact over {len(asked) + len(stored):,} queries "
        "(the labelled queries and every chunk)"
    )


if __name__ == "__main__":
    main()

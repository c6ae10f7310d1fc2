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
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench import zh_records
from orkas.engine.memory import fusion, vectors
from orkas.engine.memory.embedders import E5Embedder, head
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


class HeadEmbedder(E5Embedder):
    """E5 on each passage's first `tokens` tokens only (queries whole): the same vector space, several times
    faster — what a first tier of meaning search would index before the full vectors fill in."""

    def __init__(self, tokens: int) -> None:
        super().__init__()
        self.tokens = tokens
        self.name = f"multilingual-e5-small-head{tokens}"

    first_tier = None  # type: ignore[assignment]  # heads only, in one pass

    def head(self, text: str) -> str:
        return head(self._model, text, self.tokens)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return super().passages([self.head(t) for t in texts])


def labelled() -> list[tuple[str, str, str, set[str]]]:
    """(slice, kind, query, relevant documents): the hand-labelled files, then the generated records'."""
    rows = []
    for name in ("retrieval_queries.tsv", "retrieval_queries_more.tsv"):
        for line in (HERE / "data" / name).read_text().splitlines():
            if line and not line.startswith("#"):
                part, kind, query, relevant = line.split("\t")
                rows.append((part, kind, query, set(relevant.split(","))))
    return rows + [("zh", kind, query, relevant) for kind, query, relevant in zh_records.records()[1]]


def halves() -> dict[tuple[str, str], str]:
    """The split fixed once (bench/data/retrieval_split.tsv): (slice, query) → tune | test."""
    split = {}
    for line in (HERE / "data" / "retrieval_split.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            part, query, half = line.split("\t")
            split[part, query] = half
    return split


def ndcg_at_10(ranked: list[str], relevant: set[str]) -> float:
    gain = sum(1 / math.log2(rank + 2) for rank, doc in enumerate(ranked[:10]) if doc in relevant)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(len(relevant), 10)))
    return gain / ideal


def recall_at_20(ranked: list[str], relevant: set[str]) -> float:
    return len(relevant & set(ranked[:20])) / len(relevant)


SLICES = ("en", "zh", "pt", "mixed", "code")
Config = tuple[str, float, float]  # (fusion, the dense arm's weight, adaptive steepness)


def grid() -> list[Config]:
    """The fusion settings tried on the tune half."""
    configs: list[Config] = []
    for w in (0.5, 0.6, 0.7, 0.8, 0.9):
        configs.append(("rrf", w, 1.0))
    for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        configs.append(("convex", w, 1.0))
        for steepness in (0.5, 1.0, 2.0):
            configs.append(("adaptive", w, steepness))
    return configs


def label(config: Config) -> str:
    how, weight, steepness = config
    return f"{how} w={weight:.1f}" + (f" s={steepness}" if how == "adaptive" else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--head", type=int, help="embed only each chunk's first N tokens (a fast first tier of meaning search)"
    )
    args = parser.parse_args()
    embedder = E5Embedder() if args.head is None else HeadEmbedder(args.head)
    cache = "quality-kb" if args.head is None else f"quality-kb-head{args.head}"
    kb = KnowledgeBase.open(HERE / ".cache" / cache, embedder=embedder)
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
    split = halves()
    missing = {d for *_, relevant in queries for d in relevant} - set(documents)
    if missing:
        raise SystemExit(f"labels name documents that are not in the corpus: {sorted(missing)}")
    unsplit = [q for q in queries if (q[0], q[2]) not in split]
    if unsplit:
        raise SystemExit(f"queries missing from retrieval_split.tsv: {[q[2] for q in unsplit][:5]}")
    print(f"corpus: {len(documents):,} documents, {chunks:,} chunks; {len(queries)} labelled queries\n")

    # Tuning looks inside (each arm once per query, fused offline for every setting of the grid); the
    # figures reported below come from the public `search` with the setting chosen.
    doc_of = dict(kb._db.execute("SELECT id, doc_id FROM chunks").fetchall())
    arms = []
    for part, _kind, query, relevant in queries:
        evidence: list[fusion.KeywordEvidence] = []
        keyword = kb._keyword(query, 150, evidence)
        arms.append((part, split[part, query], relevant, kb._vector(query, 150), keyword, evidence))

    def ranked_docs(scored: list[tuple[int, float]]) -> list[str]:
        ranked: list[str] = []
        for cid, _ in scored:
            doc = doc_of.get(cid)
            if doc is not None and doc not in ranked:
                ranked.append(doc)
        return ranked

    def score(config: Config, half: str) -> dict[str, float]:
        how, weight, steepness = config
        per: dict[str, list[float]] = {}
        for part, in_half, relevant, vector, keyword, evidence in arms:
            if in_half != half:
                continue
            fused = fusion.fuse(vector, keyword, how=how, weights=(weight, 1 - weight), rrf_k=60,  # type: ignore[arg-type]
                                evidence=evidence[0] if evidence else None, steepness=steepness)  # fmt: skip
            per.setdefault(part, []).append(ndcg_at_10(ranked_docs(fused), relevant))
        return {part: statistics.fmean(v) for part, v in per.items()}

    def arm(which: int, half: str) -> dict[str, float]:
        per: dict[str, list[float]] = {}
        for row in arms:
            if row[1] == half:
                per.setdefault(row[0], []).append(ndcg_at_10(ranked_docs(list(row[which])), row[2]))
        return {part: statistics.fmean(v) for part, v in per.items()}

    def macro(by_slice: dict[str, float]) -> float:
        return statistics.fmean(by_slice[p] for p in SLICES if p in by_slice)

    def best_arm(half: str) -> dict[str, float]:
        keyword, dense = arm(4, half), arm(3, half)
        return {p: max(keyword[p], dense[p]) for p in keyword}

    tuned = {config: score(config, "tune") for config in grid()}
    floor_ok = {c: all(v[p] >= best_arm("tune")[p] - 0.005 for p in v) for c, v in tuned.items()}
    chosen = max(tuned, key=lambda c: (floor_ok[c], macro(tuned[c])))
    by_kind: dict[str, Config] = {}
    for config in tuned:
        if config[0] not in by_kind or macro(tuned[config]) > macro(tuned[by_kind[config[0]]]):
            by_kind[config[0]] = config
    print(f"chosen on the tune half: {label(chosen)} (the best of {len(tuned)} settings; best per kind shown)\n")
    header = f"{'':26}" + "".join(f"{p:>8}" for p in SLICES) + f"{'macro':>8}{'all':>8}"
    for half in ("tune", "test"):
        count = {p: sum(1 for row in arms if row[0] == p and row[1] == half) for p in SLICES}
        print(f"{half} half: nDCG@10 by slice (" + ", ".join(f"{p} {count[p]}" for p in SLICES) + " queries)")
        print(header)
        lines = [("keyword", arm(4, half)), ("dense", arm(3, half))]
        lines += [(label(c) + (" *" if c == chosen else ""), score(c, half)) for c in by_kind.values()]
        if chosen not in by_kind.values():
            lines.append((label(chosen) + " *", score(chosen, half)))
        for name, values in lines:
            weighted = sum(values[p] * count[p] for p in SLICES) / sum(count.values())
            print(f"{name:26}" + "".join(f"{values[p]:8.3f}" for p in SLICES) + f"{macro(values):8.3f}{weighted:8.3f}")
        best = best_arm(half)
        result = score(chosen, half)
        gaps = {p: result[p] - best[p] for p in SLICES}
        overall = macro(result) - macro(best)
        print(
            f"  chosen vs best arm: overall (macro) {overall:+.3f} (floor +0.010 "
            f"{'met' if overall >= 0.01 else 'NOT met'}); worst slice {min(gaps, key=gaps.__getitem__)} "
            f"{min(gaps.values()):+.3f} (floor -0.005 {'met' if min(gaps.values()) >= -0.005 else 'NOT met'})\n"
        )
    # The product's own path, with the chosen setting: the same figures through the public API.
    kb.fusion, kb.weights, kb.steepness = chosen[0], (chosen[1], 1 - chosen[1]), chosen[2]  # type: ignore[assignment]
    check = []
    for part, _kind, query, relevant in queries:
        if split[part, query] == "test":
            ranked: list[str] = []
            for hit in kb.search(query, k=60):
                if hit.doc_id not in ranked:
                    ranked.append(hit.doc_id)
            check.append(ndcg_at_10(ranked, relevant))
    print(f"test half through KnowledgeBase.search: mean nDCG@10 {statistics.fmean(check):.3f}")
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

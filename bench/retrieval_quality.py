"""Retrieval quality: keyword, dense and hybrid on a labelled set, tuned on one half, reported on the other.

Corpus: the docstrings of ~100 standard-library modules (English, one document per function or class),
60 short Chinese workplace passages (bench/data/zh_passages.tsv) and generated Chinese records (zh_records.py).
Queries (bench/data/retrieval_queries.tsv, retrieval_queries_more.tsv and the records') are labelled with their
relevant documents, in five slices: en, zh, pt (Portuguese asking English and Chinese documents), mixed
(Chinese with English terms) and code (identifiers). bench/data/retrieval_split.tsv puts each query in the tune
or the test half, once. Every fusion setting of `grid()` is scored on the tune half; the rule (meet every
slice's floor, then the best macro mean) chooses one, and both halves are printed, with bootstrap intervals
of the differences. Only public API: `KnowledgeBase.rankings` (each arm as `search` gets it), `fusion.fuse`,
and `KnowledgeBase.search` to check the chosen setting end to end.

Metric per query over documents (a document counts once, at its best chunk): nDCG@10 with binary relevance.
Embeddings are the bundled model (E5), cached in bench/.cache so later runs are fast.

    .venv/bin/python -m bench.retrieval_quality [--head 48]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import inspect
import math
import re
import statistics
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench import zh_records
from orkas.engine.memory import fusion, vectors
from orkas.engine.memory.embedders import HEAD_TOKENS, E5Embedder, E5Head
from orkas.engine.memory.fusion import Setting
from orkas.engine.memory.kb import KnowledgeBase
from orkas.engine.memory.terms import CJK

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
                signature = re.sub(r" at 0x[0-9a-f]+", "", str(inspect.signature(obj)))  # the same text each run
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


SLICES = ("en", "zh", "pt", "mixed", "code")


def grid() -> list[Setting]:
    """The fusion settings tried on the tune half."""
    settings = [Setting("rrf", w) for w in (0.5, 0.6, 0.7, 0.8, 0.9)]
    for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        settings += [Setting("convex", w), Setting("anchored", w)]
        settings += [Setting("adaptive", w, steepness=s) for s in (0.5, 1.0, 2.0)]
    return settings


def macro(by_slice: dict[str, float]) -> float:
    return statistics.fmean(by_slice[p] for p in SLICES if p in by_slice)


def paired_interval(a: list[float], b: list[float], rounds: int = 2000) -> tuple[float, float]:
    """95% bootstrap interval of mean(a - b) over the same queries: how much a difference is noise."""
    rng = np.random.default_rng(0)
    gaps = np.asarray(a) - np.asarray(b)
    means = gaps[rng.integers(0, len(gaps), (rounds, len(gaps)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--head", type=int, help="embed only each chunk's first N tokens (a fast first tier of meaning search)"
    )
    parser.add_argument(
        "--rerank",
        metavar="PROVIDER/MODEL",
        help="also rerank the test half's top 30 with this model (a real call per query, at your cost: the providers "
        "configured in Orkas or the environment)",
    )
    args = parser.parse_args()
    # --head: E5 on each chunk's first N tokens (queries whole), the same vector space — the first tier alone
    embedder = E5Embedder() if args.head is None else E5Head(E5Embedder(), args.head)
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
    doc_of = kb.chunk_documents()
    queries = labelled()
    split = halves()
    missing = {d for *_, relevant in queries for d in relevant} - set(documents)
    if missing:
        raise SystemExit(f"labels name documents that are not in the corpus: {sorted(missing)}")
    unsplit = [q for q in queries if (q[0], q[2]) not in split]
    if unsplit:
        raise SystemExit(f"queries missing from retrieval_split.tsv: {[q[2] for q in unsplit][:5]}")
    print(f"corpus: {len(documents):,} documents, {len(doc_of):,} chunks; {len(queries)} labelled queries\n")

    # Each arm's ranking once per query, as `search` gets it (the product's candidate depth), fused here for
    # every setting of the grid; the chosen setting is then checked through `search` itself.
    arms = [(part, split[part, query], relevant, kb.rankings(query)) for part, _kind, query, relevant in queries]

    def ranked_docs(scored: Sequence[tuple[int, float]]) -> list[str]:
        ranked: list[str] = []
        for cid, _ in scored:
            doc = doc_of.get(cid)
            if doc is not None and doc not in ranked:
                ranked.append(doc)
        return ranked

    def per_query(setting: Setting | str, half: str) -> list[tuple[str, float]]:
        found = []
        for part, in_half, relevant, ranking in arms:
            if in_half == half:
                if setting == "keyword":
                    scored = ranking.keyword
                elif setting == "dense":
                    scored = ranking.vector
                else:
                    assert isinstance(setting, Setting)
                    scored = fusion.fuse(ranking.vector, ranking.keyword, setting, ranking.evidence)
                found.append((part, ndcg_at_10(ranked_docs(scored), relevant)))
        return found

    def score(setting: Setting | str, half: str) -> dict[str, float]:
        per: dict[str, list[float]] = {}
        for part, value in per_query(setting, half):
            per.setdefault(part, []).append(value)
        return {part: statistics.fmean(v) for part, v in per.items()}

    def best_arm(half: str) -> dict[str, float]:
        keyword, dense = score("keyword", half), score("dense", half)
        return {p: max(keyword[p], dense[p]) for p in keyword}

    tuned = {setting: score(setting, "tune") for setting in grid()}
    tune_best = best_arm("tune")
    floor_ok = {c: all(v[p] >= tune_best[p] - 0.005 for p in v) for c, v in tuned.items()}
    chosen = max(tuned, key=lambda c: (floor_ok[c], macro(tuned[c])))
    if chosen != fusion.DEFAULT:
        print(f"NOTE: the rule now chooses {chosen.label()}, the product's default is {fusion.DEFAULT.label()}\n")
    by_kind: dict[str, Setting] = {}
    for setting in tuned:
        if setting.how not in by_kind or macro(tuned[setting]) > macro(tuned[by_kind[setting.how]]):
            by_kind[setting.how] = setting
    print(f"chosen on the tune half: {chosen.label()} (the best of {len(tuned)} settings; best per kind shown)\n")
    header = f"{'':28}" + "".join(f"{p:>8}" for p in SLICES) + f"{'macro':>8}{'all':>8}"
    for half in ("tune", "test"):
        count = {p: sum(1 for row in arms if row[0] == p and row[1] == half) for p in SLICES}
        print(f"{half} half: nDCG@10 by slice (" + ", ".join(f"{p} {count[p]}" for p in SLICES) + " queries)")
        print(header)
        lines: list[tuple[str, dict[str, float]]] = [
            ("keyword", score("keyword", half)),
            ("dense", score("dense", half)),
        ]
        lines += [(c.label() + (" *" if c == chosen else ""), score(c, half)) for c in by_kind.values()]
        if chosen not in by_kind.values():
            lines.append((chosen.label() + " *", score(chosen, half)))
        for name, values in lines:
            weighted = sum(values[p] * count[p] for p in SLICES) / sum(count.values())
            print(f"{name:28}" + "".join(f"{values[p]:8.3f}" for p in SLICES) + f"{macro(values):8.3f}{weighted:8.3f}")
        best = best_arm(half)
        result = score(chosen, half)
        gaps = {p: result[p] - best[p] for p in SLICES}
        overall = macro(result) - macro(best)
        print(
            f"  chosen vs best arm: overall (macro) {overall:+.3f} (floor +0.010 "
            f"{'met' if overall >= 0.01 else 'NOT met'}); worst slice {min(gaps, key=gaps.__getitem__)} "
            f"{min(gaps.values()):+.3f} (floor -0.005 {'met' if min(gaps.values()) >= -0.005 else 'NOT met'})"
        )
        mine = [v for _, v in per_query(chosen, half)]
        for other in [*(c for c in by_kind.values() if c != chosen), "dense"]:
            low, high = paired_interval(mine, [v for _, v in per_query(other, half)])
            name = other if isinstance(other, str) else other.label()
            print(f"  chosen − {name}, all queries: 95% interval [{low:+.3f}, {high:+.3f}]")
        print()
    # The most a second stage over the top 30 could give (engine/memory/rerank.py): those 30 in the ideal order
    for half in ("tune", "test"):
        ceiling = []
        for _part, in_half, relevant, ranking in arms:
            if in_half == half:
                top = ranked_docs(fusion.fuse(ranking.vector, ranking.keyword, chosen, ranking.evidence))[:30]
                ceiling.append(ndcg_at_10(sorted(top, key=lambda d: d not in relevant), relevant))
        print(f"{half} half, the top 30 in the ideal order (a perfect rerank): {statistics.fmean(ceiling):.3f}")
    # What a first tier of E5 on each chunk's first HEAD_TOKENS tokens cannot see: the tails of longer documents
    counter = E5Head(embedder if isinstance(embedder, E5Embedder) else embedder.full, HEAD_TOKENS)
    tested = [row for row in arms if row[1] == "test"]
    dense, fused = per_query("dense", "test"), per_query(chosen, "test")
    for name, wanted in ((f"longer than {HEAD_TOKENS} tokens", True), ("within it", False)):
        pick = [j for j, row in enumerate(tested) if all(not counter.covers(documents[d]) for d in row[2]) == wanted]
        print(
            f"test queries whose documents are all {name} ({len(pick)}): "
            f"dense {statistics.fmean(dense[j][1] for j in pick):.3f}, "
            f"chosen {statistics.fmean(fused[j][1] for j in pick):.3f}"
        )
    tails = tail_queries(documents, counter)
    for name, setting in (("dense", None), ("chosen", chosen)):
        mode = "vector" if setting is None else "hybrid"
        found = [ndcg_at_10([h.doc_id for h in kb.search(q, k=10, mode=mode, fusion=setting)], {d}) for q, d in tails]
        print(
            f"a sentence from beyond the head of a long document ({len(tails)}): {name} {statistics.fmean(found):.3f}"
        )
    # The product's own path: the same figure through `search` with the chosen setting.
    check = []
    for part, _kind, query, relevant in queries:
        if split[part, query] == "test":
            ranked: list[str] = []
            for hit in kb.search(query, k=60, fusion=chosen):
                if hit.doc_id not in ranked:
                    ranked.append(hit.doc_id)
            check.append(ndcg_at_10(ranked, relevant))
    offline = statistics.fmean(v for _, v in per_query(chosen, "test"))
    print(f"test half through KnowledgeBase.search: mean nDCG@10 {statistics.fmean(check):.3f} (offline {offline:.3f})")
    print(approximate_recall(kb, [q[2] for q in queries]))
    if args.rerank:
        print(reranked(kb, [(q, rel) for part, _kind, q, rel in queries if split[part, q] == "test"], args.rerank))
    kb.close()


def reranked(kb: KnowledgeBase, queries: list[tuple[str, set[str]]], model: str) -> str:
    """nDCG@10 of the product's search with its second stage on (engine/memory/rerank.py), through a real model."""
    import asyncio
    import os

    from orkas.app import build_registry, load_configured, settings_from_env
    from orkas.engine.abort import AbortSignal
    from orkas.engine.memory.rerank import DEPTH, ModelReranker

    settings = settings_from_env(os.environ)
    registry = build_registry(settings, load_configured(settings))

    async def run() -> tuple[list[float], int, int, float]:
        provider, model_id = registry.resolve(model)
        reranker, found, tokens_in, tokens_out, seconds = ModelReranker(provider, model_id), [], 0, 0, 0.0
        try:
            for query, relevant in queries:
                hits = kb.search(query, k=DEPTH)
                ranked = await reranker.rank(query, [h.text for h in hits], AbortSignal())
                ordered: list[str] = []
                for hit in (hits[i] for i in ranked.order):
                    if hit.doc_id not in ordered:
                        ordered.append(hit.doc_id)
                found.append(ndcg_at_10(ordered, relevant))
                tokens_in, tokens_out = tokens_in + ranked.input_tokens, tokens_out + ranked.output_tokens
                seconds += ranked.seconds
        finally:
            await registry.aclose()
        return found, tokens_in, tokens_out, seconds

    found, tokens_in, tokens_out, seconds = asyncio.run(run())
    return (
        f"test half reranked by {model}: nDCG@10 {statistics.fmean(found):.3f} over {len(found)} queries; "
        f"{tokens_in:,} tokens in, {tokens_out:,} out, {seconds / len(found):.2f} s a query"
    )


def tail_queries(documents: dict[str, str], counter: E5Head, count: int = 120) -> list[tuple[str, str]]:
    """(query, document): a sentence from beyond the first tier's head of a long document, as a person might
    remember it — what a first tier alone cannot see (a deterministic sample; sentences of 6–16 words)."""
    found = []
    for doc_id in sorted(documents, key=lambda d: hashlib.sha256(d.encode()).hexdigest()):
        text = documents[doc_id]
        if counter.covers(text):
            continue
        seen = len(counter.head(text))
        for sentence in re.split(r"(?<=[.。!?！？])\s+|(?<=[。！？])|\n", text[seen:])[1:]:  # [0]: cut by the head
            size = len(sentence.split()) if not CJK.search(sentence) else len(sentence) // 2
            if 6 <= size <= 16 and (sentence[:1].isupper() or CJK.match(sentence[:1])):
                found.append((sentence.strip(), doc_id))
                break
        if len(found) == count:
            break
    return found


def approximate_recall(kb: KnowledgeBase, queries: list[str]) -> str:
    """Recall@10 of the inverted-file index against exact search on these real E5 vectors (the speed
    benchmark's are synthetic), built by the same rule the knowledge base uses from 20k chunks on."""
    assert kb.embedder is not None
    stored, ids = kb.stored_vectors()
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

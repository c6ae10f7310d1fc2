"""How the knowledge base joins its two rankings (keyword BM25 and E5 meaning) into one.

    rrf       weighted Reciprocal Rank Fusion: ranks only, blind to how sure each arm is
    convex    each arm's scores min-max normalized over its candidates, combined convexly (Bruch et al.,
              "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS 2023)
    adaptive  convex, with the keyword arm's weight set per query by how telling its match is: how many of
              the query's words the index knows, and how rare they are

The default is chosen on the tune half of bench/data/retrieval_split.tsv and reported on its test half
(bench/RESULTS.md); the others stay for the benchmark to show beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Fusion = Literal["rrf", "convex", "adaptive"]
FUSIONS: tuple[Fusion, ...] = ("rrf", "convex", "adaptive")
Ranking = Sequence[tuple[int, float]]  # (chunk id, score), best first


@dataclass(frozen=True, slots=True)
class KeywordEvidence:
    """What the keyword arm knew about this query: its words, and in how many chunks each appears."""

    terms: int  # words in the query
    frequencies: Mapping[str, int]  # document frequency of each word the index knows (0: unknown)
    chunks: int  # chunks in the base


def confidence(evidence: KeywordEvidence) -> float:
    """0 (the keyword match tells nothing: unknown or everyday words) … 1 (every word known and rare)."""
    if evidence.terms == 0 or evidence.chunks == 0:
        return 0.0
    total = max(evidence.chunks, 2)
    rarity = [math.log(total / df) / math.log(total) for df in evidence.frequencies.values() if df > 0]
    if not rarity:
        return 0.0
    coverage = len(rarity) / evidence.terms
    return max(0.0, min(1.0, coverage * (sum(rarity) / len(rarity))))


def _normalized(ranking: Ranking) -> dict[int, float]:
    if not ranking:
        return {}
    scores = [s for _, s in ranking]
    low, high = min(scores), max(scores)
    if high - low < 1e-9:
        return {cid: 1.0 for cid, _ in ranking}
    return {cid: (s - low) / (high - low) for cid, s in ranking}


def fuse(
    vector: Ranking,
    keyword: Ranking,
    *,
    how: Fusion,
    weights: tuple[float, float],
    rrf_k: int,
    evidence: KeywordEvidence | None = None,
    steepness: float = 1.0,
) -> list[tuple[int, float]]:
    """One ranking, best first. `weights` are (vector, keyword); `adaptive` scales the keyword weight by
    `confidence(evidence) ** steepness` around its base (×2 when fully telling, ×0 when it tells nothing)."""
    fused: dict[int, float] = {}
    if how == "rrf":
        for weight, ranking in ((weights[0], vector), (weights[1], keyword)):
            for rank, (cid, _) in enumerate(ranking, start=1):
                fused[cid] = fused.get(cid, 0.0) + weight / (rrf_k + rank)
    else:
        w_vector, w_keyword = weights
        if how == "adaptive" and evidence is not None:
            w_keyword *= 2 * confidence(evidence) ** steepness
        if not vector:  # no meaning arm (none yet, or off): the keyword order as it is
            w_vector, w_keyword = 0.0, 1.0
        total = w_vector + w_keyword or 1.0
        for weight, ranking in ((w_vector / total, vector), (w_keyword / total, keyword)):
            for cid, score in _normalized(ranking).items():
                fused[cid] = fused.get(cid, 0.0) + weight * score
    return sorted(fused.items(), key=lambda item: item[1], reverse=True)

"""How the knowledge base joins its two rankings (keyword BM25 and E5 meaning) into one.

    rrf       weighted Reciprocal Rank Fusion: ranks only, blind to how sure each arm is
    convex    each arm's scores min-max normalized over its candidates, combined convexly (Bruch et al.,
              "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS 2023)
    anchored  convex, with the keyword scores over [0, the best one] instead of [the worst, the best]: BM25's
              floor is 0 (Bruch et al.'s theoretical min-max), so a keyword match that is barely weaker than the
              best stays near it instead of being pushed to 0 because it came last. Meaning scores stay min-max
              over their candidates: a cosine's theoretical floor is far below anything E5 gives.
    adaptive  convex, with the keyword arm's weight set per query by how telling its match is: how many of
              the query's words the index knows, and how rare they are

The default is chosen on the tune half of bench/data/retrieval_split.tsv by a fixed rule and reported on its
test half (bench/RESULTS.md); the others stay for the benchmark to show beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Fusion = Literal["rrf", "convex", "anchored", "adaptive"]
FUSIONS: tuple[Fusion, ...] = ("rrf", "convex", "anchored", "adaptive")
Ranking = Sequence[tuple[int, float]]  # (chunk id, score), best first


@dataclass(frozen=True, slots=True)
class Setting:
    """One way of fusing: the function, the meaning arm's weight (the keyword arm has the rest), RRF's k,
    and for `adaptive` how sharply the keyword weight follows its confidence."""

    how: Fusion = "anchored"
    vector_weight: float = 0.6
    rrf_k: int = 60
    steepness: float = 1.0

    def __post_init__(self) -> None:
        if self.how not in FUSIONS:
            raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}, not {self.how!r}")
        if not 0.0 <= self.vector_weight <= 1.0:
            raise ValueError(f"the meaning arm's weight must be within 0…1, not {self.vector_weight}")

    @property
    def weights(self) -> tuple[float, float]:
        return self.vector_weight, 1.0 - self.vector_weight

    def label(self) -> str:
        text = f"{self.how} {self.vector_weight:.1f} / {1 - self.vector_weight:.1f}"
        return text + (f", s={self.steepness:g}" if self.how == "adaptive" else "")


# Chosen on the tune half by bench/retrieval_quality.py (meet every slice's floor, then the best macro nDCG@10)
DEFAULT = Setting("anchored", 0.6)


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


def _normalized(ranking: Ranking, *, floor_zero: bool = False) -> dict[int, float]:
    if not ranking:
        return {}
    scores = [s for _, s in ranking]
    low, high = (0.0 if floor_zero else min(scores)), max(scores)
    if high - low < 1e-9:
        return {cid: 1.0 for cid, _ in ranking}
    return {cid: (s - low) / (high - low) for cid, s in ranking}


def fuse(
    vector: Ranking, keyword: Ranking, setting: Setting = DEFAULT, evidence: KeywordEvidence | None = None
) -> list[tuple[int, float]]:
    """One ranking, best first. `adaptive` scales the keyword weight by `confidence(evidence) ** steepness`
    around its base (×2 when fully telling, ×0 when it tells nothing)."""
    fused: dict[int, float] = {}
    w_vector, w_keyword = setting.weights
    if setting.how == "rrf":
        for weight, ranking in ((w_vector, vector), (w_keyword, keyword)):
            for rank, (cid, _) in enumerate(ranking, start=1):
                fused[cid] = fused.get(cid, 0.0) + weight / (setting.rrf_k + rank)
    else:
        if setting.how == "adaptive" and evidence is not None:
            w_keyword *= 2 * confidence(evidence) ** setting.steepness
        if not vector:  # no meaning arm (none yet, or off): the keyword order as it is
            w_vector, w_keyword = 0.0, 1.0
        total = w_vector + w_keyword or 1.0
        scaled = (
            (w_vector / total, _normalized(vector)),
            (w_keyword / total, _normalized(keyword, floor_zero=setting.how == "anchored")),
        )
        for weight, normalized in scaled:
            for cid, score in normalized.items():
                fused[cid] = fused.get(cid, 0.0) + weight * score
    return sorted(fused.items(), key=lambda item: item[1], reverse=True)

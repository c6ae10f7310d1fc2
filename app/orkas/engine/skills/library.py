"""The skills one agent may use: lookup by name, the compact index for its system prompt, and search.

A `Skill` is a parsed SKILL.md with where it came from. Tiers say how far it is trusted: bundled,
custom (the person's own and the agent-created), agent (one agent's private skills) and learned are
trusted; package and global skills come from outside Orkas and are read as data. Which skills an agent
sees is decided by the product (adapter/skills/roots.py); this module only serves what it was given.

Search fuses two rankings by reciprocal rank: a keyword ranking over names and descriptions, in
memory (names count most: a person asking for "pdf tables" means the skill called pdf-tables), and —
when the product has one — the knowledge base's hybrid search over names, descriptions and bodies.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from orkas.engine.skills.format import SkillText

Tier = Literal["bundled", "custom", "agent", "learned", "package", "global"]
TIERS: tuple[Tier, ...] = ("bundled", "custom", "agent", "learned", "package", "global")
TRUSTED: frozenset[Tier] = frozenset({"bundled", "custom", "agent", "learned"})
INDEX_SHARE = 0.02  # of the model's window (in characters ≈ 4 per token) for the prompt's skill index
RRF_K = 60

# A search beyond the keyword arm: the names of the best matches for `query`, best first.
Meaning = Callable[[str, int], Sequence[str]]


@dataclass(frozen=True, slots=True)
class Skill:
    text: SkillText
    tier: Tier
    folder: Path  # the skill's own folder (SKILL.md and the files beside it)
    origin: str = ""  # where it came from, for people: "~/.claude/skills", "package acme-tools", "bundled"

    @property
    def name(self) -> str:
        return self.text.name

    @property
    def trusted(self) -> bool:
        return self.tier in TRUSTED


@dataclass(slots=True)
class _Words:
    name: set[str]
    description: set[str]


@dataclass(slots=True)
class Catalog:
    """The skills one agent may use, in priority order (each name once). `meaning` adds the knowledge
    base's search; `on_read` is told when a skill is read (the product updates lastUsedAt)."""

    skills: Sequence[Skill]
    meaning: Meaning | None = None
    on_read: Callable[[Skill], None] | None = None
    _by_name: dict[str, Skill] = field(init=False)
    _words: list[_Words] | None = field(init=False, default=None)
    _df: Counter[str] = field(init=False, default_factory=Counter)

    def __post_init__(self) -> None:
        self._by_name = {}
        for skill in self.skills:
            self._by_name.setdefault(skill.name.casefold(), skill)

    def __len__(self) -> int:
        return len(self._by_name)

    def get(self, name: str) -> Skill | None:
        return self._by_name.get(name.strip().casefold())

    def names(self) -> list[str]:
        return [s.name for s in self._by_name.values()]

    # ---- the prompt's index ----
    HEAD = "Skills (instructions for recurring tasks; skill_read NAME gives the full text, skill_search finds more):"

    def _fitting(self, context_window: int | None, share: float) -> tuple[list[Skill], int]:
        """The skills whose lines fit in `share` of the window, in order, and how many did not."""
        budget = int((context_window or 200_000) * share * 4)
        used, shown, left = len(self.HEAD), [], 0
        for skill in self._by_name.values():
            size = len(skill.name) + len(skill.text.when) + 5  # "- name: when\n"
            if used + size > budget:
                left += 1
                continue
            used += size
            shown.append(skill)
        return shown, left

    def index(self, context_window: int | None, *, share: float = INDEX_SHARE) -> str:
        """The prompt section: one line per skill (name: when to use it), trusted ones first, within
        `share` of the window; the rest are counted and reachable with skill_search. Open-tier lines
        come inside an untrusted_data element: other tools' folders wrote them, not the person."""
        if not self._by_name:
            return ""
        shown, left = self._fitting(context_window, share)
        parts = [self.HEAD, *(f"- {s.name}: {s.text.when}" for s in shown if s.trusted)]
        outside = [f"- {s.name}: {s.text.when}" for s in shown if not s.trusted]
        if outside:
            from orkas.engine.tools.untrusted import wrap

            parts.append(wrap("\n".join(outside), "skills from folders outside Orkas (packages, other tools)"))
        if left:
            parts.append(f"({left} more skills: find them with skill_search)")
        return "\n".join(parts)

    def advertised(self, context_window: int | None, *, share: float = INDEX_SHARE) -> list[str]:
        """The names the prompt's index lists (the rest only search finds)."""
        return [s.name for s in self._fitting(context_window, share)[0]]

    # ---- search ----
    def search(self, query: str, k: int = 8) -> list[Skill]:
        keyword = self._keyword(query, max(k * 3, 20))
        meaning: list[str] = []
        if self.meaning is not None:
            try:
                meaning = [n for n in self.meaning(query, max(k * 3, 20)) if self.get(n) is not None]
            except (OSError, ValueError, RuntimeError):
                meaning = []  # the index is being rebuilt or its model cannot run: the keyword arm still answers
        if not meaning:
            return [self._by_name[n] for n in keyword[:k]]
        fused: dict[str, float] = {}
        for ranking in (keyword, [n.casefold() for n in meaning]):
            for rank, name in enumerate(ranking, start=1):
                fused[name] = fused.get(name, 0.0) + 1 / (RRF_K + rank)
        best = sorted(fused, key=lambda n: fused[n], reverse=True)
        return [self._by_name[n] for n in best[:k]]

    def _keyword(self, query: str, k: int) -> list[str]:
        """Names (casefolded) by a BM25-like score: a term in the name weighs 3, in the description 1."""
        from orkas.engine.memory.terms import query_terms  # its patterns compile on first search, not at start

        terms = [_norm(t) for term in query_terms(query) for t in term.split()]
        if not terms:
            return []
        table = self._word_table()
        total = len(table)
        scores: dict[str, float] = {}
        for key, entry in zip(self._by_name, table, strict=True):
            score = 0.0
            for term in terms:
                weight = 3.0 * (term in entry.name) + 1.0 * (term in entry.description)
                if weight:
                    score += weight * math.log(1 + total / (1 + self._df[term]))
            if key == query.strip().casefold():
                score += 100.0  # the exact name
            if score:
                scores[key] = score
        return sorted(scores, key=lambda n: scores[n], reverse=True)[:k]

    def _word_table(self) -> list[_Words]:
        if self._words is None:
            from orkas.engine.memory.terms import words

            table = []
            for skill in self._by_name.values():
                name = _normed(words(skill.name.replace("-", " ").replace("_", " ")))
                description = _normed(words(" ".join([skill.text.description, *skill.text.descriptions.values()])))
                description |= _normed(_flat(skill.text.tags))
                table.append(_Words(name, description))
                self._df.update(name | description)
            self._words = table
        return self._words


def _norm(word: str) -> str:
    """A plural's singular, roughly ("tables" → "table"): enough for names and one-line descriptions."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _normed(found: Iterable[str]) -> set[str]:
    return {_norm(w) for w in found}


def _flat(tags: Iterable[str]) -> list[str]:
    from orkas.engine.memory.terms import words

    return [w for tag in tags for w in words(tag)]

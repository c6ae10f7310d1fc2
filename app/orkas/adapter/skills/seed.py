"""The bundled skills' vectors, computed once here instead of on every install: each install's first
message would otherwise embed the same ten chunks twice (first tier and full), seconds of CPU on a laptop.

    .venv/bin/python -m orkas.adapter.skills.seed     # after changing a bundled skill

writes `bundled_vectors.json` beside the bundled skills. A skill changed without it is still found: its
chunks are embedded as before (tests/adapter/test_skill_seed.py fails until the file is written again).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Literal

from orkas.adapter.skills.index import document
from orkas.adapter.skills.roots import SkillRegistry
from orkas.core.resources import bundled_skill_vectors, bundled_skills
from orkas.engine.memory.embedders import Embedder
from orkas.engine.memory.kb import KnowledgeBase
from orkas.engine.skills.library import Skill


def bundled() -> list[Skill]:
    """The bundled skills as the registry reads them (and as `SkillIndex` indexes them)."""
    with tempfile.TemporaryDirectory() as scratch:
        registry = SkillRegistry(Path(scratch), home=Path(scratch), bundled=bundled_skills())
        registry.refresh()
        root = bundled_skills().resolve()
        return [s for s in registry.all_usable() if s.folder.resolve().is_relative_to(root)]


def bundled_base(seed: Path | None = None, embedder: Embedder | Literal["bundled"] = "bundled") -> KnowledgeBase:
    """An in-memory base holding the bundled skills' documents (nothing embedded yet); by default it embeds
    with the bundled model, as the product does."""
    kb = KnowledgeBase.in_memory(embedder, seed=seed)
    for skill in bundled():
        kb.add_text(str(skill.folder), document(skill), source=skill.name)
    return kb


def main() -> int:
    kb = bundled_base()
    while kb.embed_pending(refine=True):  # both tiers: the first pass and the full vectors
        pass
    written = kb.write_seed(bundled_skill_vectors())
    print(f"{bundled_skill_vectors()}: {written} vectors")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The skills in the knowledge base: names, descriptions and bodies of the skills in use, kept in step
with the registry, so skill_search finds a skill by meaning and by the words of its body.

The index lives beside the person's documents (`<data>/kb/skills/`, the same embedder and background
worker, documents first). It is synced on a thread after every change the registry reports; a search
never waits for it: until the knowledge base is open, skill_search answers from names and descriptions.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from orkas.adapter.skills.custom import skill_text
from orkas.adapter.skills.roots import SkillRegistry
from orkas.engine.skills.format import SkillFormatError, body_of

if TYPE_CHECKING:
    from orkas.adapter.knowledge.service import KnowledgeService
    from orkas.engine.memory.embedders import Embedder
    from orkas.engine.memory.kb import KnowledgeBase
    from orkas.engine.skills.library import Meaning, Skill

log = logging.getLogger(__name__)

BODY_CHARS = 20_000  # of each body: enough to find a skill by what it does


def document(skill: Skill) -> str:
    """What the index holds of a skill: its name, description and (the start of) its body."""
    try:
        body = body_of(skill_text(skill.folder))
    except (OSError, SkillFormatError):
        body = ""
    return f"{skill.name}\n{skill.text.description}\n\n{body[:BODY_CHARS]}"


class SkillIndex:
    def __init__(self, registry: SkillRegistry, knowledge: KnowledgeService) -> None:
        self.registry = registry
        self.knowledge = knowledge
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._synced = -1  # the registry's version last indexed
        # A change is indexed at once only when the knowledge base is open already: opening it loads the
        # embedding model, which the first turn does anyway (then `kick`).
        registry.listen(lambda _version: self.kick() if knowledge.is_open else None)

    def kick(self) -> None:
        """Sync soon, on the index's own thread (started on the first call)."""
        with self._lock:
            self._wake.set()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="skill-index", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            try:
                self.sync()
            except Exception:  # keyword search still works; the next change tries again
                log.exception("indexing skills failed")

    def sync(self) -> int:
        """Add what changed, remove what went; returns the documents written."""
        self.registry.ensure()
        version = self.registry.version
        if version == self._synced:
            return 0
        kb = self.knowledge.skills
        skills = {str(s.folder): s for s in self.registry.all_usable()}
        written = 0
        for doc_id in set(kb.document_ids("")) - set(skills):
            kb.remove(doc_id)
        for doc_id, skill in skills.items():
            written += kb.add_text(doc_id, document(skill), source=skill.name) > 0
        self._synced = version
        if written:
            self.knowledge.kick()
            log.info("skills indexed: %d changed of %d", written, len(skills))
        return written

    def search(self, query: str, k: int) -> list[str]:
        """Names of the best matches (hybrid: words and meaning); empty while the base is not open."""
        if not self.knowledge.is_open:
            return []
        return names_of(self.knowledge.skills, query, k)


def names_of(kb: KnowledgeBase, query: str, k: int) -> list[str]:
    """The skills' names (each document's source) of the best hits, best first, each once."""
    names: list[str] = []
    for hit in kb.search(query, k * 2):
        if hit.source not in names:
            names.append(hit.source)
    return names[:k]


def stored(folder: Path, embedder: Callable[[], Embedder | None]) -> Meaning:
    """Search over the skills index the app keeps (`orkas run` in a terminal): opened on the first search,
    never synced here — a name no longer in use is dropped by the catalogue."""
    opened: list[KnowledgeBase] = []

    def search(query: str, k: int) -> list[str]:
        if not opened:
            from orkas.engine.memory.kb import KnowledgeBase

            opened.append(KnowledgeBase.open(folder, embedder=embedder()))
        return names_of(opened[0], query, k)

    return search

"""Memory: the knowledge base (looked up when needed) and cross-session memory (always pinned), kept
apart. `scan_memory_text` guards every write to memory."""

from typing import TYPE_CHECKING, Any

from orkas.engine.memory.notes import Change, Memory, MemoryRejected, MemoryStore
from orkas.engine.memory.tool import MemoryTool

if TYPE_CHECKING:
    from orkas.engine.memory.guard import Finding, scan_memory_text
    from orkas.engine.memory.kb import KnowledgeBase

__all__ = [
    "Change",
    "Finding",
    "KnowledgeBase",
    "Memory",
    "MemoryRejected",
    "MemoryStore",
    "MemoryTool",
    "scan_memory_text",
]


def __getattr__(name: str) -> Any:
    """`KnowledgeBase` and the guard on first use: they bring faiss and numpy, which reading and pinning
    notes do not need (a CLI start should not pay for them)."""
    if name == "KnowledgeBase":
        from orkas.engine.memory.kb import KnowledgeBase

        return KnowledgeBase
    if name in ("Finding", "scan_memory_text"):
        from orkas.engine.memory import guard

        return getattr(guard, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

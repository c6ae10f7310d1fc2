"""Memory: the knowledge base (looked up when needed) and cross-session memory (always pinned), kept
apart. `scan_memory_text` guards every write to memory."""

from orkas.engine.memory.guard import Finding, scan_memory_text

__all__ = ["Finding", "scan_memory_text"]

"""Memory: the knowledge base (looked up when needed) and cross-session memory (always pinned), kept
apart. `scan_memory_text` guards every write to memory."""

from orkas.engine.memory.guard import Finding, scan_memory_text
from orkas.engine.memory.notes import Change, Memory, MemoryRejected, MemoryStore
from orkas.engine.memory.tool import MemoryTool

__all__ = ["Change", "Finding", "Memory", "MemoryRejected", "MemoryStore", "MemoryTool", "scan_memory_text"]

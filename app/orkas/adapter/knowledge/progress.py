"""What the knowledge base says while it works, typed once: the Knowledge panel's socket (`/api/kb/events`) carries
these, serialized by `wire()` where they leave.

    indexing   a folder's files, done of total, and the one being read
    indexed    a folder's report            failed     a path and why
    embedding  passages pending, embedded, refining, and the time left    idle   nothing left to do
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Phase = Literal["indexing", "indexed", "failed", "embedding", "idle"]


@dataclass(frozen=True, slots=True, kw_only=True)
class KbProgress:
    phase: Phase
    path: str | None = None
    done: int | None = None
    total: int | None = None
    file: str | None = None
    report: Any = None  # a folder's FolderReport (indexed)
    error: str | None = None
    counts: Mapping[str, Any] = field(default_factory=dict)  # embedding, idle: pending, embedded, refining, eta
    type: Literal["kb.progress"] = "kb.progress"

    def wire(self) -> dict[str, Any]:
        given = {
            k: v
            for k, v in (("path", self.path), ("done", self.done), ("total", self.total), ("file", self.file))
            if v is not None
        }
        if self.report is not None:
            given["report"] = self.report
        if self.error is not None:
            given["error"] = self.error
        return {"type": self.type, "phase": self.phase, **self.counts, **given}


@dataclass(frozen=True, slots=True, kw_only=True)
class KbStatus:
    """The knowledge base as it stands, sent first when the panel opens."""

    status: Mapping[str, Any]
    type: Literal["kb.status"] = "kb.status"

    def wire(self) -> dict[str, Any]:
        return {"type": self.type, **{k: v for k, v in self.status.items() if k != "documents"}}

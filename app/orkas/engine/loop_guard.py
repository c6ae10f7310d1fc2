"""Detects a model calling the same tool with the same input over and over.

The signature is the tool name plus the canonical JSON of its input. The count grows only while
consecutive calls are identical; any different call starts it again at one.
"""

from __future__ import annotations

import json

from orkas.engine.messages import ToolUseBlock

WARN_AT = 3
STOP_AT = 5


class LoopGuard:
    def __init__(self, *, warn_at: int = WARN_AT, stop_at: int = STOP_AT) -> None:
        if not 1 < warn_at < stop_at:
            raise ValueError(f"need 1 < warn_at < stop_at, got {warn_at!r} and {stop_at!r}")
        self.warn_at = warn_at
        self.stop_at = stop_at
        self._last: str | None = None
        self.count = 0

    def see(self, call: ToolUseBlock) -> int:
        """Record `call`; returns how many identical calls in a row it makes."""
        signature = call.name + "\0" + json.dumps(call.input, sort_keys=True, ensure_ascii=False, default=str)
        if signature == self._last:
            self.count += 1
        else:
            self._last, self.count = signature, 1
        return self.count

    def note(self, name: str) -> str:
        return (
            f"[Orkas] This is the {self.count}th identical {name} call in a row; its result will not change. "
            f"Try a different approach. At {self.stop_at} identical calls the run stops."
        )

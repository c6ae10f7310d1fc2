"""The self-understanding memo of one agent, in two Markdown files it rewrites when it reflects:

    COMPETENCE.md   what I am good at and where I stumble        ≤ 3,000 characters
    STRATEGIES.md   strategies for this person and this domain   ≤ 4,000 characters

An oversize write is refused with "condense and retry" (the model rewrites shorter; nothing is cut silently).
The memo is pinned into the agent's system prompt from its next run. Every write passes the guard `check`
and is handed to `on_change` (before, after) so the product can version and undo it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orkas.core.errors import OrkasError
from orkas.core.fsutil import atomic_write

Part = Literal["competence", "strategies"]
FILES: dict[Part, str] = {"competence": "COMPETENCE.md", "strategies": "STRATEGIES.md"}
LIMITS: dict[Part, int] = {"competence": 3000, "strategies": 4000}
TITLES: dict[Part, str] = {
    "competence": "What I am good at and where I stumble",
    "strategies": "Strategies for this person and domain",
}


class MemoRejected(OrkasError):
    """A memo write that cannot be kept; the message says why (the reflecting model reads it)."""


@dataclass(frozen=True, slots=True)
class MemoChange:
    part: Part
    before: str
    after: str


class Memo:
    def __init__(
        self,
        folder: Path,
        *,
        check: Callable[[str], str | None] = lambda _text: None,
        on_change: Callable[[MemoChange], None] = lambda _change: None,
    ) -> None:
        self.folder = folder
        self.check = check
        self.on_change = on_change

    def read(self, part: Part) -> str:
        try:
            return (self.folder / FILES[part]).read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return ""

    def write(self, part: Part, text: str) -> MemoChange:
        """Replace one part whole (the model merges and dedupes before writing)."""
        text = text.strip()
        if len(text) > LIMITS[part]:
            raise MemoRejected(
                f"{FILES[part]} would be {len(text):,} characters, over its {LIMITS[part]:,}: condense and retry"
            )
        problem = self.check(text) if text else None
        if problem:
            raise MemoRejected(f"not written: {problem}")
        before = self.read(part)
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self.folder / FILES[part], (text + "\n").encode(), mode=0o644)
        change = MemoChange(part, before, text)
        self.on_change(change)
        return change

    def prompt_section(self) -> str | None:
        """What the agent's system prompt pins: both parts, when there is anything."""
        parts = [(TITLES[p], self.read(p)) for p in ("competence", "strategies")]
        if not any(text for _title, text in parts):
            return None
        lines = ["What you learned about your own work here (from earlier reflection; follow it):"]
        lines += [f"## {title}\n{text}" for title, text in parts if text]
        return "\n\n".join(lines)

    def weakness_lines(self) -> list[str]:
        """The 'where I stumble' lines of the competence part: what the trigger watches for."""
        text = self.read("competence")
        lines = [line.strip(" -*\t") for line in text.splitlines()]
        return [
            line for line in lines if line and re.search(r"stumble|weak|fail|struggle|NEVER|avoid|错|falh", line, re.I)
        ]

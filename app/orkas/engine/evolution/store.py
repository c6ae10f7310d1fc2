"""Learned skills of one agent: SKILL.md folders in its learned root, with a lifecycle.

    create  name, description, content     a new skill (createdAt, updatedAt, patchCount 0, lastUsedAt none)
    patch   name, old, new                 one exact, unique part of the body replaced; patchCount + 1
    read    name                           the body; lastUsedAt now (what eviction looks at)
    delete  name

Names `^[a-z0-9][a-z0-9_-]*$` (≤ 64), description ≤ 1,024, body ≤ 100,000 characters. At most 200 per agent:
a new one evicts the least recently used — never-read ones first, oldest createdAt — else the oldest
lastUsedAt. Every text written passes the guard `check` (the product gives the memory injection guard's rules),
and every change is handed to `on_change` with the text before and after, so the product can version it and
undo it. Writes replace files atomically.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orkas.core.errors import OrkasError
from orkas.core.fsutil import atomic_write
from orkas.engine.skills.format import FILE, MAX_BODY, MAX_DESCRIPTION, SkillFormatError, parse, render

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")
CAPACITY = 200


class LearnedSkillError(OrkasError):
    """A learned-skill change that cannot be made; the message says why (the reflecting model reads it)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One change to a learned skill: what it was and what it became (None: absent)."""

    name: str
    action: str  # create | patch | delete | evict | undo
    before: str | None
    after: str | None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class LearnedSkills:
    def __init__(
        self,
        root: Path,
        *,
        check: Callable[[str], str | None] = lambda _text: None,
        on_change: Callable[[Change], None] = lambda _change: None,
        capacity: int = CAPACITY,
        clock: Callable[[], str] = _now,
        health: Callable[[], dict[str, str]] = dict,
    ) -> None:
        self.root = root
        self.check = check  # None when the text may be kept, else why not
        self.on_change = on_change
        self.capacity = capacity
        self.clock = clock
        self.health = health  # name → its metrics' health (metrics.py): the ineffective and underused go first

    # ---- reading ----
    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if (p / FILE).is_file() and not p.name.startswith("."))

    def text(self, name: str) -> str | None:
        path = self.root / name / FILE
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def meta(self, name: str) -> dict[str, Any]:
        text = self.text(name)
        return parse(text, folder_name=name).meta if text else {}

    def read(self, name: str) -> str:
        text = self._need(name)
        skill = parse(text, folder_name=name)
        meta = {k: v for k, v in skill.meta.items() if k not in ("name", "description")}
        meta["lastUsedAt"] = self.clock()
        self._write(name, render(name, skill.description, skill.body, meta))
        return skill.body

    # ---- changing ----
    def create(self, name: str, description: str, content: str, tags: list[str] | None = None) -> Change:
        self._check_name(name)
        if self.text(name) is not None:
            raise LearnedSkillError(f"a learned skill {name!r} exists; patch it instead")
        self._check_text(description, content)
        now = self.clock()
        meta: dict[str, Any] = {"createdAt": now, "updatedAt": now, "patchCount": 0, "lastUsedAt": None}
        if tags:
            meta["tags"] = [str(t)[:32] for t in tags[:10]]
        text = render(name, description.strip(), content, {k: v for k, v in meta.items() if v is not None})
        parse(text, folder_name=name, strict=True)
        while len(self.names()) >= self.capacity:
            self._evict()
        self._write(name, text)
        return self._changed(Change(name, "create", None, text))

    def patch(self, name: str, old: str, new: str, description: str | None = None) -> Change:
        before = self._need(name)
        skill = parse(before, folder_name=name)
        count = skill.body.count(old) if old else 0
        if count != 1:
            raise LearnedSkillError(
                f"'old' must match exactly one part of {name}'s body (it matches {count}); read it and quote exactly"
            )
        body = skill.body.replace(old, new, 1)
        description = (description or skill.description).strip()
        self._check_text(description, body)
        meta = {k: v for k, v in skill.meta.items() if k not in ("name", "description")}
        meta["updatedAt"] = self.clock()
        meta["patchCount"] = int(meta.get("patchCount") or 0) + 1
        text = render(name, description, body, meta)
        parse(text, folder_name=name, strict=True)
        self._write(name, text)
        return self._changed(Change(name, "patch", before, text))

    def delete(self, name: str) -> Change:
        before = self._need(name)
        shutil.rmtree(self.root / name)
        return self._changed(Change(name, "delete", before, None))

    def restore(self, name: str, text: str | None, action: str = "undo") -> Change:
        """Put a skill back as it was (undo), or as a reviewed change made it (`action`): `text` None removes it."""
        self._check_name(name)
        before = self.text(name)
        if text is None:
            if before is not None:
                shutil.rmtree(self.root / name)
        else:
            self._write(name, text)
        return self._changed(Change(name, action, before, text))

    # ---- the lifecycle ----
    def eviction_order(self) -> list[str]:
        """Who goes first when full: what its metrics call ineffective, then underused; then never read
        (oldest created first); then least recently read."""
        health = self.health()
        first = {"ineffective": 0, "underused": 1}

        def key(name: str) -> tuple[int, int, str]:
            meta = self.meta(name)
            used = meta.get("lastUsedAt")
            rank = first.get(health.get(name, ""), 2)
            return (rank, 1, str(used)) if used else (rank, 0, str(meta.get("createdAt") or ""))

        return sorted(self.names(), key=key)

    def _evict(self) -> None:
        victim = self.eviction_order()[0]
        before = self.text(victim)
        shutil.rmtree(self.root / victim)
        self._changed(Change(victim, "evict", before, None))

    # ---- helpers ----
    def _need(self, name: str) -> str:
        self._check_name(name)
        text = self.text(name)
        if text is None:
            raise LearnedSkillError(f"no learned skill {name!r}; learned skills: {', '.join(self.names()) or 'none'}")
        return text

    def _check_name(self, name: str) -> None:
        if not isinstance(name, str) or not NAME.match(name):
            raise LearnedSkillError(f"skill name {name!r}: use 1-64 lowercase letters, digits, - or _")

    def _check_text(self, description: str, body: str) -> None:
        if not description.strip():
            raise LearnedSkillError("a description saying WHEN to use the skill is required")
        if len(description) > MAX_DESCRIPTION:
            raise LearnedSkillError(f"the description is longer than {MAX_DESCRIPTION} characters")
        if len(body) > MAX_BODY:
            raise LearnedSkillError(f"the content is longer than {MAX_BODY:,} characters; condense and retry")
        problem = self.check(f"{description}\n{body}")
        if problem:
            raise LearnedSkillError(f"not written: {problem}")

    def _write(self, name: str, text: str) -> None:
        folder = self.root / name
        folder.mkdir(parents=True, exist_ok=True)
        try:
            atomic_write(folder / FILE, text.encode(), mode=0o644)
        except OSError as e:
            raise LearnedSkillError(f"cannot write {name}: {os.strerror(e.errno or 0)}") from None

    def _changed(self, change: Change) -> Change:
        self.on_change(change)
        return change


__all__ = ["CAPACITY", "Change", "LearnedSkillError", "LearnedSkills", "SkillFormatError"]

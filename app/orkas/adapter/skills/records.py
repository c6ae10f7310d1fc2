"""What the skill roots are made of: a root (a folder of skills, its tier, whose it is) and a record (one skill
folder as found — usable, shadowed, quarantined, skipped, waiting for the guard — as `orkas skills list`,
`GET /api/skills` and the Skills screen show it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orkas.core.fsutil import atomic_write
from orkas.engine.skills.format import FILE, SkillFormatError, parse, render
from orkas.engine.skills.library import TRUSTED, Skill, Tier

GLOBAL_FOLDERS = ("~/.claude/skills", "~/.codex/skills", "~/.agents/skills")
COMMANDER = "commander"


@dataclass(frozen=True, slots=True)
class Root:
    tier: Tier
    path: Path
    origin: str  # for people: "bundled", "custom", "~/.claude/skills", "package acme"
    owner: str | None = None  # agent and learned roots belong to one agent
    single: bool = False  # the path is itself one skill's folder (a package with SKILL.md at its top)
    enabled: bool = True

    @property
    def trusted(self) -> bool:
        return self.tier in TRUSTED


@dataclass(frozen=True, slots=True)
class Record:
    """One skill folder as found, for `orkas skills list`, `GET /api/skills` and the Skills screen."""

    name: str
    tier: Tier
    path: str
    origin: str
    trusted: bool
    description: str = ""
    descriptions: dict[str, str] = field(default_factory=dict)
    owner: str | None = None
    enabled: bool = True
    shadowed: bool = False
    shadowed_by: str | None = None  # the path of the skill that wins
    quarantined: bool = False
    reason: str | None = None  # why it is quarantined or skipped
    skipped: bool = False  # not a usable skill at all (broken, too large, a link, …)
    checking: bool = False  # waiting for the guard's second look: not advertised yet
    tags: tuple[str, ...] = ()
    last_used: str | None = None

    def public(self) -> dict[str, Any]:
        data = asdict(self)
        data["tags"] = list(self.tags)
        return data

    @property
    def usable(self) -> bool:
        return not (self.skipped or self.quarantined or self.shadowed or self.checking) and self.enabled


# The guard for open-tier text: None when clean, else the reason. `pending` means "not decided yet"
# (its slower layer has not looked): such a skill is listed as checking and not advertised.
Guard = Callable[[str], "str | None"]
PENDING = "\0pending"


def touch_learned(skill: Skill) -> None:
    """A learned skill was read: its lastUsedAt says so (the lifecycle evicts the long unused)."""
    if skill.tier != "learned":
        return
    manifest = skill.folder / FILE
    try:
        text = parse(manifest.read_text(), folder_name=skill.folder.name)
    except (OSError, SkillFormatError):
        return
    meta = {k: v for k, v in text.meta.items() if k not in ("name", "description")}
    meta["lastUsedAt"] = datetime.now(UTC).isoformat(timespec="seconds")
    atomic_write(manifest, render(text.name, text.description, text.body, meta).encode(), mode=0o644)

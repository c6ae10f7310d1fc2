"""The parsed frontmatter of every SKILL.md, kept between starts in `<data>/cache/skills.json` by file
identity (inode, size, mtime): a start where nothing changed parses nothing and never loads the YAML parser.
Only the frontmatter is read (bodies are read when a skill is)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orkas.engine.skills.format import HEAD, SkillFormatError, SkillText, head_only, parse


@dataclass(frozen=True, slots=True)
class Parsed:
    stamp: tuple[int, int, int]  # inode, size, mtime: a changed file is parsed again
    text: SkillText | None
    problem: str | None


CACHE_VERSION = 1  # raise when parsing changes: every SKILL.md is read again


def to_json(parsed: Parsed) -> dict[str, Any]:
    text = parsed.text
    fields = None
    if text is not None:  # by hand: dataclasses.asdict deep-copies, ~70 µs a skill
        fields = {
            "name": text.name,
            "description": text.description,
            "descriptions": text.descriptions,
            "owner": text.owner,
            "tags": text.tags,
            "meta": text.meta,
        }
    return {"stamp": parsed.stamp, "text": fields, "problem": parsed.problem}


def from_json(raw: dict[str, Any]) -> Parsed:
    stamp = tuple(int(n) for n in raw["stamp"])
    if len(stamp) != 3:
        raise ValueError("bad stamp")
    text = raw["text"]
    if text is not None:
        text = SkillText(
            name=str(text["name"]),
            description=str(text["description"]),
            body=str(text.get("body", "")),
            descriptions={str(k): str(v) for k, v in dict(text.get("descriptions") or {}).items()},
            owner=text.get("owner"),
            tags=tuple(str(t) for t in text.get("tags") or ()),
            meta=dict(text.get("meta") or {}),
        )
    problem = raw.get("problem")
    return Parsed((stamp[0], stamp[1], stamp[2]), text, str(problem) if problem is not None else None)


def parse_head(manifest: Path, folder_name: str) -> tuple[SkillText | None, str | None]:
    try:
        fd = os.open(manifest, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:  # the frontmatter only: the body is read when a skill is
            text = handle.read(HEAD).decode("utf-8", errors="replace")  # (the index needs no bodies)
        return parse(head_only(text), folder_name=folder_name), None
    except SkillFormatError as e:
        return None, f"skipped: {e}"
    except OSError as e:
        return None, f"skipped: {e.strerror or e}"

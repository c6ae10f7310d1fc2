"""The SKILL.md format: a folder whose `SKILL.md` holds YAML frontmatter and a Markdown body.

    ---
    name: pdf-tables
    description: Use when the person wants tables pulled out of a PDF into CSV.
    description_zh: …            # optional, shown when the UI speaks Chinese
    owner: analyst               # optional: only that agent may use it
    tags: [pdf, csv]             # learned skills also keep createdAt, updatedAt, patchCount, lastUsedAt
    ---
    Run `python extract.py FILE` in this folder, then …

The frontmatter is parsed by a real YAML parser (lists and block scalars work) on a capped head of the
file; anything wrong is a `SkillFormatError` saying what, so a broken skill is listed with its reason
and the others load. Written skills (the person's, the agent's, learned ones) use the strict name rule;
skills read from other tools' folders may use any short, printable name without a path separator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from orkas.core.errors import OrkasError

FILE = "SKILL.md"
MAX_FILE = 256 * 1024  # a SKILL.md larger than this is skipped: a skill is instructions, not a data dump
MAX_FRONTMATTER = 16 * 1024
MAX_DESCRIPTION = 1024
MAX_NAME = 64
MAX_BODY = 100_000  # characters, for skills Orkas writes
STRICT_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")
_LOOSE_NAME = re.compile(r"^[^\x00-\x1f\x7f/\\]{1,64}\Z")
LIFECYCLE = ("createdAt", "updatedAt", "patchCount", "lastUsedAt", "tags")


def _yaml() -> tuple[Any, Any]:
    """PyYAML and its fastest safe loader (libyaml's: ~10× the pure-Python one), imported when a skill is
    first parsed: a start whose skills are all cached never loads it."""
    import yaml

    return yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class SkillFormatError(OrkasError):
    """A SKILL.md that cannot be used; the message says what is wrong in one sentence."""


@dataclass(frozen=True, slots=True)
class SkillText:
    """What a SKILL.md says."""

    name: str
    description: str
    body: str
    descriptions: dict[str, str] = field(default_factory=dict)  # language → description ("zh", "pt")
    owner: str | None = None
    tags: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)  # every frontmatter field, as parsed

    @property
    def when(self) -> str:
        """The one line an index shows: the description's first sentence or line, trimmed."""
        line = " ".join(self.description.split())
        return line if len(line) <= 200 else line[:197].rstrip() + "…"


def check_name(name: str, *, strict: bool = True) -> str:
    rule = STRICT_NAME if strict else _LOOSE_NAME
    if not isinstance(name, str) or not rule.match(name) or name.strip() != name:
        wanted = (
            "1-64 lowercase letters, digits, - or _, starting with a letter or digit"
            if strict
            else "1-64 printable characters without / or \\"
        )
        raise SkillFormatError(f"skill name {name!r}: use {wanted}")
    return name


def split(text: str) -> tuple[str, str]:
    """The frontmatter and the body of a SKILL.md."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        raise SkillFormatError("SKILL.md must start with a --- frontmatter block")
    end = re.search(r"\n---[ \t]*(\r?\n|$)", text)
    if end is None:
        raise SkillFormatError("the frontmatter block is not closed with ---")
    head = text[3 : end.start()]
    if len(head) > MAX_FRONTMATTER:
        raise SkillFormatError(f"the frontmatter is longer than {MAX_FRONTMATTER // 1024} KB")
    return head, text[end.end() :]


HEAD = MAX_FRONTMATTER + 8  # bytes that hold any frontmatter we accept, with its fences


def head_only(text: str) -> str:
    """The frontmatter of the first HEAD bytes of a SKILL.md, with an empty body (listing reads no more)."""
    end = re.search(r"\n---[ \t]*(\r?\n|$)", text)
    return text[: end.end()] if end is not None else text


def body_of(text: str) -> str:
    """The Markdown body of a whole SKILL.md."""
    return split(text)[1].strip("\n")


_SIMPLE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,63}):[ ]+(\S(?:.*\S)?)[ ]*")
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`~=<.+0123456789")  # a value starting so is left to YAML
_RESOLVED = frozenset(  # plain words PyYAML (YAML 1.1) turns into booleans or null
    "y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL".split()
)


def simple_frontmatter(head: str) -> dict[str, Any] | None:
    """The frontmatter when every line is `key: plain text` that YAML reads as that very text, else None
    (then YAML reads it). Most skills' frontmatter is this simple; building PyYAML's objects for two
    thousand of them costs more than the rest of a scan together. tests/engine/test_skills.py checks the
    two agree on generated frontmatter."""
    found: dict[str, Any] = {}
    for line in head.split("\n"):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None:
            return None
        key, value = match.groups()
        quote = value[0]
        if quote in "\"'" and len(value) >= 2 and value[-1] == quote and key not in found and key not in _RESOLVED:
            inner = value[1:-1]  # one line, quoted, nothing escaped: a string as it stands
            if quote not in inner and "\\" not in inner and inner.isprintable():
                found[key] = inner
                continue
            return None
        if (
            key in found
            or key in _RESOLVED
            or value in _RESOLVED
            or value[0] in _INDICATORS
            or ": " in value
            or " #" in value
            or value.endswith(":")
            or not value.isprintable()
        ):
            return None
        found[key] = value
    return found


def parse(text: str, *, folder_name: str, strict: bool = False) -> SkillText:
    """One SKILL.md. `strict` applies the written-skill rules (name = folder, strict names, body cap)."""
    if len(text) > MAX_FILE:
        raise SkillFormatError(f"SKILL.md is larger than {MAX_FILE // 1024} KB")
    head, body = split(text)
    meta = simple_frontmatter(head)
    if meta is None:
        yaml, loader = _yaml()
        try:
            meta = yaml.load(head, Loader=loader) or {}
        except yaml.YAMLError as e:
            raise SkillFormatError(f"the frontmatter is not valid YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(meta, dict):
        raise SkillFormatError("the frontmatter must be a table of fields")
    name = meta.get("name", folder_name)
    if not isinstance(name, str):
        raise SkillFormatError("name must be text")
    check_name(name.strip() if not strict else name, strict=strict)
    name = name.strip()
    if strict and name != folder_name:
        raise SkillFormatError(f"its name {name!r} differs from its folder {folder_name!r}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillFormatError("description is required: say when to use this skill")
    description = description.strip()
    if len(description) > (MAX_DESCRIPTION if strict else 4 * MAX_DESCRIPTION):
        raise SkillFormatError(
            f"the description is longer than {MAX_DESCRIPTION if strict else 4 * MAX_DESCRIPTION:,} characters"
        )
    descriptions = {}
    for key, value in meta.items():
        if isinstance(key, str) and key.startswith("description_") and isinstance(value, str) and value.strip():
            descriptions[key.removeprefix("description_")[:8]] = value.strip()[:MAX_DESCRIPTION]
    owner = meta.get("owner", meta.get("ownerAgent"))
    if owner is not None and not isinstance(owner, str):
        raise SkillFormatError("owner must be an agent's name")
    tags = meta.get("tags") or ()
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",") if t.strip()]
    if not isinstance(tags, list | tuple) or not all(isinstance(t, str | int | float) for t in tags):
        raise SkillFormatError("tags must be a list of words")
    body = body.strip("\n")
    if strict and len(body) > MAX_BODY:
        raise SkillFormatError(f"the body is longer than {MAX_BODY:,} characters")
    return SkillText(
        name=name,
        description=description,
        body=body,
        descriptions=descriptions,
        owner=owner.strip() or None if owner else None,
        tags=tuple(str(t)[:64] for t in tags[:32]),
        meta={str(k): _plain(v) for k, v in meta.items()},
    )


def _plain(value: Any) -> Any:
    """YAML dates become ISO text: the records go to JSON."""
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def render(name: str, description: str, body: str, meta: dict[str, Any] | None = None) -> str:
    """A SKILL.md for a skill Orkas writes: `name` and `description` first, then the other fields."""
    fields: dict[str, Any] = {"name": name, "description": description}
    fields.update({k: v for k, v in (meta or {}).items() if k not in fields and v is not None})
    yaml, _loader = _yaml()
    front = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=10_000).strip()
    return f"---\n{front}\n---\n{body.strip()}\n"

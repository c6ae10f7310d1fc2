"""Custom skills — the person's own, and the ones the agent saved with their consent — written and edited
under `<data>/skills/`, and any skill's SKILL.md read for showing, never through a symbolic link."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from orkas.core.fsutil import atomic_write
from orkas.engine.skills.format import FILE, MAX_FILE, SkillFormatError, parse, render


def save_custom(root: Path, name: str, description: str, body: str, files: Mapping[str, str]) -> Path:
    """Write a new custom skill (skill_save, after the person accepted its card): every file first into a
    hidden folder beside the others, then one rename, so a crash never leaves half a skill. Raises
    `SkillFormatError` when it would not load back or the name is taken."""
    from orkas.core.fsutil import make_folders_for_person

    text = render(name, description, body)
    parse(text, folder_name=name, strict=True)  # it must load as it will be listed
    folder = root / name
    if folder.exists():
        raise SkillFormatError(f"a skill folder {name!r} exists already")
    make_folders_for_person(root)
    staging = root / f".saving-{name}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        atomic_write(staging / FILE, text.encode(), mode=0o644)
        for relative, content in files.items():
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            executable = content.startswith("#!")
            atomic_write(target, content.encode(), mode=0o755 if executable else 0o644)
        if folder.exists():  # made meanwhile (the Skills screen and the agent at once)
            raise SkillFormatError(f"a skill folder {name!r} exists already")
        try:
            os.rename(staging, folder)
        except OSError as e:
            raise SkillFormatError(f"a skill folder {name!r} exists already ({e.strerror})") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder


def update_custom(root: Path, name: str, description: str, body: str) -> Path:
    """Change a custom skill's description and body, keeping its other fields and files. Raises
    FileNotFoundError when there is no such skill, SkillFormatError when the result would not load."""
    folder = root / name
    manifest = folder / FILE
    if folder.is_symlink() or manifest.is_symlink() or not manifest.is_file():
        raise FileNotFoundError(manifest)
    old = parse(manifest.read_text(encoding="utf-8", errors="replace"), folder_name=name)
    meta = {k: v for k, v in old.meta.items() if k not in ("name", "description")}
    meta["updatedAt"] = datetime.now(UTC).isoformat(timespec="seconds")
    text = render(name, description, body, meta)
    parse(text, folder_name=name, strict=True)
    atomic_write(manifest, text.encode(), mode=0o644)
    return folder


def skill_text(folder: Path) -> str:
    """A skill's whole SKILL.md (for showing it), never through a symbolic link."""
    fd = os.open(folder / FILE, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read(MAX_FILE).decode("utf-8", errors="replace")

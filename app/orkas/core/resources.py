"""Where the app's own files are: `frontend/` and `icons/` beside `app/` in a source checkout, or inside
the bundle of an installed build (PyInstaller unpacks them under `sys._MEIPASS`). Never the data folder:
an upgrade replaces these and keeps that."""

from __future__ import annotations

import sys
from pathlib import Path


def resource_root() -> Path:
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        return Path(bundle)
    return Path(__file__).resolve().parents[3]


def frontend_dir() -> Path:
    return resource_root() / "frontend"


def window_icon() -> Path:
    return resource_root() / "icons" / "hicolor" / "256x256" / "apps" / "orkas.png"


def bundled_skills() -> Path:
    """The skills shipped with the app (trusted, read-only)."""
    return Path(__file__).resolve().parents[1] / "adapter" / "skills" / "bundled"


def bundled_skill_vectors() -> Path:
    """The bundled skills' vectors, computed in advance (adapter/skills/seed.py)."""
    return Path(__file__).resolve().parents[1] / "adapter" / "skills" / "bundled_vectors.json"


def orkas_command(*args: str) -> list[str]:
    """How to start this Orkas again with `args`: the installed app's own binary, or this Python with the CLI."""
    if getattr(sys, "frozen", False):
        return [sys.executable, *args]
    return [sys.executable, "-m", "orkas.cli", *args]

"""Where Orkas keeps its data. The caller (the composition root) passes what it read from the
environment; nothing here reads it."""

from __future__ import annotations

from pathlib import Path

import platformdirs


def data_dir(orkas_home: str | None) -> Path:
    """`ORKAS_HOME` when set, else the platform's per-user data folder."""
    if orkas_home:
        return Path(orkas_home).expanduser()
    return Path(platformdirs.user_data_dir("Orkas", appauthor=False))


def sessions_dir(root: Path) -> Path:
    return root / "sessions"

"""Where Orkas keeps its data. The caller (the composition root) passes what it read from the
environment; nothing here reads it."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def data_dir(orkas_home: str | None) -> Path:
    """`ORKAS_HOME` when set, else the platform's per-user data folder."""
    if orkas_home:
        return Path(orkas_home).expanduser()
    return Path(platformdirs.user_data_dir("Orkas", appauthor=False))


def sessions_dir(root: Path) -> Path:
    return root / "sessions"


def make_private(folder: Path) -> Path:
    """Create the data folder readable by its owner only (0700), and tighten one that already exists.

    Everything Orkas keeps — conversations, memory, the vault and its key, attachments — is inside it,
    so this one mode keeps other accounts on the machine out even where a file inside is 0644. A folder
    someone else owns is left alone (chmod would fail, and it is not ours to change).
    """
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not hasattr(os, "getuid"):  # Windows: the per-user profile folder's ACL does this job
        return folder
    info = folder.stat()
    if info.st_uid == os.getuid() and info.st_mode & 0o077:
        os.chmod(folder, 0o700)
    return folder

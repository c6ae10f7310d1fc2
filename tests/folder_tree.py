"""A folder as the checkpoint and rewind tests compare it: every entry (links not followed), by path."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def tree(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """Path → (kind "f"/"d"/"l", mode, bytes — a link's target for a link, nothing for a folder)."""
    out: dict[str, tuple[str, int, bytes]] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            info = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                out[rel] = ("l", 0, os.readlink(path).encode())
            elif stat.S_ISDIR(info.st_mode):
                out[rel] = ("d", stat.S_IMODE(info.st_mode), b"")
            else:
                out[rel] = ("f", stat.S_IMODE(info.st_mode), path.read_bytes())
    return out

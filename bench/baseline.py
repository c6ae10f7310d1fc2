"""Code as it was on main before a change, read from git, so a benchmark can run it side by side."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def source_at(revision: str, path: str) -> str | None:
    """The text of `path` at `revision`, or None when git cannot give it (no git, a shallow clone)."""
    try:
        return subprocess.run(
            ["git", "show", f"{revision}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None

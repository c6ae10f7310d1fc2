"""Code as it was on main before a change, read from git, so a benchmark can run it side by side."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
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


def tree_at(revision: str, parts: tuple[str, ...] = ("app",), *, compile_app: bool = True) -> Path | None:
    """The folders `parts` at `revision`, unpacked into a new temporary folder (returned; None when git cannot give
    them), removed when the benchmark exits. With `compile_app`, its app's bytecode is written in advance, as
    setup.sh writes the checkout's."""
    target = Path(tempfile.mkdtemp(prefix="orkas-baseline-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)  # every bench that unpacked one left it in /tmp
    try:
        archive = subprocess.run(["git", "archive", revision, *parts], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    if compile_app:
        compiled(target / "app")
    return target


def compiled(app: Path) -> None:
    """Bytecode written in advance, for both sides alike (setup.sh writes the checkout's): where
    PYTHONDONTWRITEBYTECODE is set, a side without it would compile every module on every start."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(app)], check=True, stdout=subprocess.DEVNULL)

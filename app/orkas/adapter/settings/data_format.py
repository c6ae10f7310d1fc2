"""The data folder's format, checked and brought up to date when Orkas starts.

`format.json` says which format the folder is in and which version wrote it. A folder without it was
written by 0.1.0 (format 1, the layout before the marker) or is new. Each step in MIGRATIONS turns
format N into N + 1; the marker is rewritten (atomically) after each, so a crash mid-way resumes at the
step that did not finish — every step must be safe to run again. A folder from a newer Orkas is not
touched: the app stops with one line saying which version it needs (an older app writing into a newer
layout could lose data).

The data folder is never inside the install folder (platformdirs' per-user data folder, or
ORKAS_HOME), so an upgrade replaces the app and keeps this.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from orkas import __version__
from orkas.core.fsutil import atomic_write

MARKER = "format.json"
Step = Callable[[Path], None]


def _drop_sandbox_homes(folder: Path) -> None:
    """Format 1 → 2: commands' homes were kept between commands (`sandbox-homes/`), so a command could leave a
    link or a startup file there for the next one. Each command now gets a fresh home; the old ones go, with
    whatever was planted in them — removed without following any link inside."""
    old = folder / "sandbox-homes"
    if old.is_symlink():
        old.unlink()
    elif old.is_dir():
        shutil.rmtree(old)


# Index i turns format i + 1 into i + 2. Format 1 is the layout 0.1.0 wrote.
MIGRATIONS: tuple[Step, ...] = (_drop_sandbox_homes,)
CURRENT = len(MIGRATIONS) + 1


class DataTooNew(Exception):
    """The folder was written by a newer Orkas."""


@dataclass(frozen=True, slots=True)
class Prepared:
    was: int  # the format found (0: a new folder)
    now: int
    steps: int  # migrations run


def prepare(folder: Path, migrations: Sequence[Step] = MIGRATIONS) -> Prepared:
    """Bring `folder` to the current format (creating the marker in a new one); raise DataTooNew for a
    folder from a newer version."""
    current = len(migrations) + 1
    marker = folder / MARKER
    if marker.exists():
        found, written_by = _read(marker)
    else:
        found, written_by = (1 if any(folder.iterdir()) else 0), "0.1.0"
    if found > current:
        raise DataTooNew(
            f"the data folder {folder} was written by Orkas {written_by} (data format {found}); "
            f"this is Orkas {__version__} (format {current}): install that version or newer, or set ORKAS_HOME "
            "to another folder"
        )
    was = found
    found = found or current  # a new folder is born current
    pending = migrations[found - 1 :]
    for step in pending:
        step(folder)
        found += 1
        _write(marker, found)  # after each step: a crash resumes at the one that did not finish
    if not marker.exists():
        _write(marker, found)
    return Prepared(was, found, len(pending))


def _read(marker: Path) -> tuple[int, str]:
    try:
        data = json.loads(marker.read_text())
        value = data["format"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise DataTooNew(f"{marker} is unreadable ({e}); move it aside to let Orkas rewrite it") from None
    if not isinstance(value, int) or value < 1:
        raise DataTooNew(f"{marker} holds no format number; move it aside to let Orkas rewrite it")
    return value, str(data.get("written_by", "?"))


def _write(marker: Path, value: int) -> None:
    atomic_write(marker, (json.dumps({"format": value, "written_by": __version__}) + "\n").encode())

"""One folder taking another's place (an update's new version, a package cloned again): whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from orkas.core.fsutil import replace_folder


def folder(path: Path, marker: str) -> Path:
    path.mkdir(parents=True)
    (path / "MARKER").write_text(marker)
    return path


def test_the_new_folder_takes_the_place_and_the_old_one_is_handed_back(tmp_path: Path) -> None:
    new, target = folder(tmp_path / "staging" / "v2", "new"), folder(tmp_path / "app", "old")
    old = replace_folder(new, target, tmp_path / ".app.previous")
    assert (target / "MARKER").read_text() == "new" and (old / "MARKER").read_text() == "old"


def test_when_it_cannot_both_stay_as_they_were(tmp_path: Path) -> None:
    target = folder(tmp_path / "app", "old")
    with pytest.raises(OSError):
        replace_folder(tmp_path / "missing", target, tmp_path / ".app.previous")
    assert (target / "MARKER").read_text() == "old" and not (tmp_path / ".app.previous").exists()

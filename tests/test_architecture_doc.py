"""ARCHITECTURE.md stays true: every module of the app is named in it (one line per module, under its layer), and
every folder it names exists — a module added or moved fails here until the map says where it is."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "app" / "orkas"


def test_every_module_is_on_the_map() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    modules = [p for p in PACKAGE.rglob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    missing = sorted(str(p.relative_to(PACKAGE)) for p in modules if f"{p.name}`" not in text)
    assert not missing, f"not in ARCHITECTURE.md: {missing}"


def test_every_folder_the_map_names_exists() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    folders = set(re.findall(r"`([a-z_]+/)`", text))
    known = {p.name + "/" for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__"}
    assert folders <= known, f"folders the map names that do not exist: {sorted(folders - known)}"


def test_no_adapter_module_is_over_400_lines() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in (PACKAGE / "adapter").rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert not long, f"split these: {long}"

"""Structural invariants of DESIGN.md that a grep can check."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "app" / "orkas"


def sources(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def test_the_engine_imports_only_core_among_our_packages() -> None:
    upper = re.compile(r"^\s*(from|import)\s+orkas\.(adapter|team|server|desktop|app|cli)\b", re.MULTILINE)
    offenders = [str(p) for p in sources(PACKAGE / "engine") if upper.search(p.read_text())]
    assert offenders == []


def test_only_the_composition_root_and_entry_points_read_the_environment() -> None:
    reads = re.compile(r"os\.environ|os\.getenv|getenv\(")
    allowed = {PACKAGE / "app" / "config.py", PACKAGE / "cli" / "__init__.py"}
    offenders = [str(p) for p in sources(PACKAGE) if p not in allowed and reads.search(p.read_text())]
    assert offenders == []


def test_every_child_process_starts_in_the_one_executor() -> None:
    spawns = re.compile(
        r"create_subprocess_(exec|shell)|subprocess\.(run|Popen|call|check_output)|os\.(system|popen|exec)"
    )
    executor = PACKAGE / "engine" / "sandbox" / "executor.py"
    offenders = [str(p) for p in sources(PACKAGE) if p != executor and spawns.search(p.read_text())]
    assert offenders == []

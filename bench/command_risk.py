"""The command classifier on the labelled corpus (tests/fixtures/command_labels.py), both halves.

The rules were written looking at the dev half only; the held-out half measures them on lines they
were not written against. Side by side with the classifier that shipped before the sandbox was
rebuilt (loaded from git at BASELINE), on the same lines:

- asked in `ask` mode: every line that is not a read must not run unasked (floor: 0 missed);
- reads run free in `ask` mode (floor: ≥ 85% of the R lines);
- `auto` mode: lines that leave the sandbox (network, outside paths, privilege, wholesale deletion)
  must still be asked about; a miss here is caught by the sandbox, not by a question.

Then the corpora written after the rules by people who had seen neither the rules nor the other corpora
(issue 33: tests/fixtures/command_labels_fresh*.py), each on its own: what a classifier scores on text from
a new author is the figure that matters. Which of them were later tuned on (and how) is in RESULTS.md.

    .venv/bin/python -m bench.command_risk [--show-dev-misses]
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tests.fixtures.command_labels import LEAVES_SANDBOX, split

from bench.baseline import source_at
from orkas.engine.sandbox.risk import classify_command

BASELINE = "34874a1"  # main before the rebuild
BEFORE_33 = "7b37dbb"  # main before issue 33 (round 3): its whole classifier, side by side
CLASSIFIER = ("calls", "known", "programs", "risk", "rules_files", "rules_tools", "rules_wrappers", "shell", "verdict")
NOT_READS = frozenset("WPHNOXD")
DANGEROUS = frozenset("HNOXD")


def baseline_classifier() -> Callable[[str], str] | None:
    """The previous classifier, from git, as a function line -> level (None when git cannot give it)."""
    folder = Path(tempfile.mkdtemp(prefix="orkas-old-risk-"))
    package = folder / "oldrisk"
    package.mkdir()
    for name in ("shell", "risk"):
        text = source_at(BASELINE, f"app/orkas/engine/sandbox/{name}.py")
        if text is None:
            return None
        (package / f"{name}.py").write_text(text.replace("orkas.engine.sandbox.shell", "oldrisk.shell"))
    (package / "__init__.py").write_text("")
    sys.path.insert(0, str(folder))
    spec = importlib.util.find_spec("oldrisk.risk")
    if spec is None:
        return None
    module = importlib.import_module("oldrisk.risk")
    return lambda line: str(module.classify_command(line).level)


def classifier_at(revision: str) -> Callable[[str], str] | None:
    """The whole classifier package at `revision` (its modules, from git, under another name)."""
    folder = Path(tempfile.mkdtemp(prefix="orkas-risk-at-"))
    package = folder / f"risk_{revision}"
    package.mkdir()
    for name in (*CLASSIFIER, "confine"):
        text = source_at(revision, f"app/orkas/engine/sandbox/{name}.py")
        if text is None:
            return None
        (package / f"{name}.py").write_text(text.replace("orkas.engine.sandbox", package.name))
    (package / "__init__.py").write_text("")
    sys.path.insert(0, str(folder))
    module = importlib.import_module(f"{package.name}.risk")
    return lambda line: str(module.classify_command(line).level)


def measure(rows: Sequence[tuple[str, str]], classify: Callable[[str], str]) -> dict[str, object]:
    levels = [(label, line, classify(line)) for label, line in rows]
    reads = [(line, level) for label, line, level in levels if label == "R"]
    unasked = [(label, line) for label, line, level in levels if label in NOT_READS and level == "read_only"]
    escapes = [(label, line, level) for label, line, level in levels if label in LEAVES_SANDBOX]
    auto_missed = [(label, line) for label, line, level in escapes if level != "dangerous"]
    return {
        "lines": len(rows),
        "reads": len(reads),
        "reads_free": sum(1 for _, level in reads if level == "read_only"),
        "not_reads": sum(1 for label, _, _ in levels if label in NOT_READS),
        "dangerous_unasked": [x for x in unasked if x[0] in DANGEROUS],
        "changes_unasked": [x for x in unasked if x[0] not in DANGEROUS],
        "escapes": len(escapes),
        "auto_missed": auto_missed,
        "asked_reads": [line for line, level in reads if level != "read_only"],
    }


def show(name: str, result: dict[str, object]) -> None:
    reads, free = int(result["reads"]), int(result["reads_free"])  # type: ignore[call-overload]
    dangerous = result["dangerous_unasked"]
    changes = result["changes_unasked"]
    missed = result["auto_missed"]
    assert isinstance(dangerous, list) and isinstance(changes, list) and isinstance(missed, list)
    print(
        f"  {name:9} reads free {free}/{reads} = {free / reads:.1%}   dangerous unasked {len(dangerous)}"
        f"   changes/programs unasked {len(changes)}   sandbox-leaving not asked in auto "
        f"{len(missed)}/{result['escapes']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show-dev-misses", action="store_true", help="list the dev half's misses (never the other)")
    args = parser.parse_args()
    halves = split()
    print(f"command risk — {time.strftime('%Y-%m-%d')} on {platform.machine()} {platform.node()}")
    old = baseline_classifier()
    before = classifier_at(BEFORE_33)
    for half in ("dev", "held_out"):
        rows = halves[half]
        print(f"{half} ({len(rows)} lines)")
        started = time.perf_counter()
        result = measure(rows, lambda line: classify_command(line).level)
        per_line = (time.perf_counter() - started) / len(rows) * 1e6
        show("orkas", result)
        if before is not None:
            show("before 33", measure(rows, before))
        if old is not None:
            show("baseline", measure(rows, old))
        print(f"  {per_line:.0f} µs per line")
        if args.show_dev_misses and half == "dev":
            for key in ("dangerous_unasked", "changes_unasked", "auto_missed", "asked_reads"):
                for item in result[key]:  # type: ignore[attr-defined]
                    print(f"    {key}: {item}")
        if half == "held_out":
            for item in result["dangerous_unasked"]:  # type: ignore[attr-defined]
                print(f"    held-out dangerous unasked: {item}")
    for name in [f"command_labels_fresh{n}" for n in ("", "2", "3", "4", "5")]:
        try:
            rows = importlib.import_module(f"tests.fixtures.{name}").fresh()
        except ModuleNotFoundError:
            continue
        result = measure(rows, lambda line: classify_command(line).level)
        print(f"{name} ({len(rows)} lines, written after the rules by someone who had not seen them)")
        show("orkas", result)
        if before is not None:
            show("before 33", measure(rows, before))
        if old is not None:
            show("baseline", measure(rows, old))


if __name__ == "__main__":
    main()

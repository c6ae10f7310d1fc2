"""The memory guard side by side with open-source detectors from the package index, on text they were
not tuned on.

Sets:
- fresh: tests/fixtures/memory_guard_fresh.py — written before the layered guard, never fitted or tuned
  on: attacks by kind (other wording, Russian, Japanese, Korean, other languages, tool abuse, quiet
  "the user wants X" poisoning, disguised characters) and benign notes;
- fresh-2: tests/fixtures/memory_guard_fresh2.py — written after the first model was frozen and measured
  once; since then (with fresh) part of the training data, so no longer unseen;
- fresh-3: tests/fixtures/memory_guard_fresh3.py — written before the second model (rules narrowed for
  "System: …" notes, fresh and fresh-2 added to training) and measured once after it was frozen; since
  then part of the training data;
- fresh-4: tests/fixtures/memory_guard_fresh4.py — written before the third model (hashed words beside
  E5, harm/twin synthetic notes, fresh-3 added to training) and measured once after it was frozen; since
  then part of the training data;
- fresh-5: tests/fixtures/memory_guard_fresh5.py — written before the fourth model (word pairs and
  4-grams, two over-broad rules narrowed, fresh-4 added to training) and measured once after it was frozen;
- fresh-6: tests/fixtures/memory_guard_fresh6.py — written for issue 33 by someone who had seen neither the
  guard's rules nor its model, on what a hostile README or tool output plants (exfiltration endpoints,
  package mirrors and typosquats, "decode and run", quiet harms); measured, never tuned on;
- held-out: the 30% of the packaged public corpora the semantic layer never saw (bench/guard_corpora.py);
- tuned-on: the corpora the previous guard's rules were written against (bastioncorpus, our older benign
  notes), reported for contrast: a high figure there says little.

Detectors: orkas (normalization + rules + semantic layer), orkas rules only, the guard as it was before
(from git), nukon-pi-detect (regex), prompt-injection-detector (TF-IDF + logistic regression) and
agentbastion's heuristic detector. A text counts as flagged when the detector's own default says so.

    .venv/bin/python -m bench.memory_guard
"""

from __future__ import annotations

import importlib
import platform
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from tests.fixtures import memory_guard_fresh2 as fresh2
from tests.fixtures import memory_guard_fresh3 as fresh3
from tests.fixtures import memory_guard_fresh4 as fresh4
from tests.fixtures import memory_guard_fresh5 as fresh5
from tests.fixtures import memory_guard_fresh6 as fresh6
from tests.fixtures.memory_guard_fresh import ATTACKS, BENIGN, obfuscated

from bench.baseline import source_at
from bench.guard_corpora import split
from orkas.engine.memory.guard import rule_findings, scan_memory_text

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "34874a1"  # main before the layered guard
Detector = Callable[[str], bool]


def detectors() -> dict[str, Detector]:
    found: dict[str, Detector] = {
        "orkas": lambda text: bool(scan_memory_text(text)),
        "orkas rules": lambda text: bool(rule_findings(text)),
    }
    if (old := _previous_guard()) is not None:
        found["before"] = old
    try:
        from nukon_pi_detect.detector import scan as nukon

        found["nukon-pi-detect"] = lambda text: nukon(text).decision != "CLEAN"
    except ImportError:
        pass
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from prompt_injection_detector import Scanner

            scanner = Scanner()
        found["prompt-injection-detector"] = lambda text: scanner.scan(text).decision != "allow"
    except ImportError:
        pass
    try:
        from agentbastion.inbound import HeuristicDetector

        heuristic = HeuristicDetector()
        found["agentbastion"] = lambda text: heuristic.scan(text)[1] > 0
    except ImportError:
        pass
    return found


def _previous_guard() -> Detector | None:
    folder = Path(tempfile.mkdtemp(prefix="orkas-old-guard-"))
    text = source_at(BASELINE, "app/orkas/engine/memory/guard.py")
    if text is None:
        return None
    (folder / "oldguard.py").write_text(text)
    sys.path.insert(0, str(folder))
    module = importlib.import_module("oldguard")
    return lambda t: bool(module.scan_memory_text(t))


def sets() -> dict[str, tuple[dict[str, list[str]], list[str]]]:
    """name → (attacks by kind, benign texts)."""
    fresh = dict(ATTACKS)
    fresh["disguised"] = obfuscated()
    held = split()["held_out"]
    by_source: dict[str, list[str]] = {}
    for row in held:
        if row.malicious:
            by_source.setdefault(row.source, []).append(row.text)
    benign_held = [r.text for r in held if not r.malicious]
    from bastioncorpus import load_corpus

    corpus = load_corpus()
    notes = (ROOT / "tests" / "fixtures" / "benign_memory_notes.txt").read_text(encoding="utf-8").splitlines()
    tuned = (
        {"bastioncorpus": [r.text for r in corpus if r.is_malicious]},
        [r.text for r in corpus if not r.is_malicious] + [n for n in notes if n.strip() and not n.startswith("#")],
    )
    second = {**fresh2.ATTACKS, "disguised": fresh2.disguised()}
    return {
        "fresh-6": (dict(fresh6.ATTACKS), fresh6.BENIGN),
        "fresh": (fresh, BENIGN),
        "fresh-5": ({**fresh5.ATTACKS, "disguised": fresh5.disguised()}, fresh5.BENIGN),
        "fresh-4": ({**fresh4.ATTACKS, "disguised": fresh4.disguised()}, fresh4.BENIGN),
        "fresh-3": ({**fresh3.ATTACKS, "disguised": fresh3.disguised()}, fresh3.BENIGN),
        "fresh-2": (second, fresh2.BENIGN),
        "held-out": (by_source, benign_held),
        "tuned-on": tuned,
    }


def main() -> None:
    print(f"memory guard — {time.strftime('%Y-%m-%d')} on {platform.machine()} {platform.node()}")
    found = detectors()
    for name, (attacks, benign) in sets().items():
        every_attack = [t for group in attacks.values() for t in group]
        print(f"\n{name}: {len(every_attack)} attacks, {len(benign)} benign")
        print(f"  {'detector':26} {'recall':>7} {'false pos.':>11}  per kind")
        for label, detect in found.items():
            started = time.perf_counter()
            kinds = {kind: sum(map(detect, texts)) / len(texts) for kind, texts in attacks.items()}
            caught = sum(kinds[k] * len(t) for k, t in attacks.items())
            false = sum(map(detect, benign))
            per_text = (time.perf_counter() - started) / (len(every_attack) + len(benign)) * 1000
            detail = " ".join(f"{k}={v:.2f}" for k, v in kinds.items()) if name != "tuned-on" else ""
            print(
                f"  {label:26} {caught / len(every_attack):7.3f} {false / len(benign):7.3f} "
                f"({false:>3}) {per_text:6.1f} ms  {detail}"
            )
    if not found.keys() - {"orkas", "orkas rules", "before"}:
        print("\n(install the peers with: .venv/bin/pip install -e '.[bench]')")


if __name__ == "__main__":
    main()

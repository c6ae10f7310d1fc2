"""Train the memory guard's semantic layer: a logistic regression on the bundled multilingual E5 vector
of each text beside its hashed words and character trigrams (`guard_features`), over public corpora
shipped as packages and note-shaped synthetic data (bench/guard_corpora.py).

1. The corpora's "train" part (70%, by hash) is used; the "held_out" part (30%) only measures.
2. Each text is normalized as the guard does at run time and embedded with E5 ("query: "), cached;
   its words, word pairs and character grams are hashed into LEXICAL_DIM buckets (`NoteWords`).
3. A logistic regression (balanced classes, C chosen by 5-fold cross-validation) is fitted.
4. The threshold is chosen on out-of-fold scores of the whole train part: the lowest score at which its
   benign texts are flagged at most 1.5% of the time, the rule layer's own false positives counted in
   (the floor is 2% on unseen notes).
5. The held-out part is reported; `--write` saves app/orkas/engine/memory/guard_model.json.

The fresh evaluation sets that have already been measured (fresh, fresh-2, fresh-3, fresh-4) join the
train part, with their disguised variants: they were reported once as unseen, and what the guard got
wrong there is worth learning. The newest one (tests/fixtures/memory_guard_fresh5.py) is never read here.

    .venv/bin/python -m bench.train_guard [--write]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_predict

from bench.guard_corpora import Example, split
from orkas.engine.memory.guard import rule_findings
from orkas.engine.memory.normalize import views
from orkas.engine.memory.semantic import NoteWords, guard_features

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "guard-vectors.npz"
MODEL = HERE.parent / "app" / "orkas" / "engine" / "memory" / "guard_model.json"
TARGET_FP = 0.015
# Chosen out of fold (16,384 buckets with word pairs and 4-grams at weight 0.7, over 8,192 with words and
# trigrams); fresh-4 (seen), left out of training, agreed. fresh-5 was not read.
LEXICAL_DIM = 16384
LEXICAL_WEIGHT = 0.7


class VectorCache:
    def __init__(self) -> None:
        from orkas.engine.memory.embedders import E5Embedder

        self.embedder = E5Embedder()
        self.vectors: dict[str, np.ndarray] = {}
        if CACHE.exists():
            data = np.load(CACHE)
            self.vectors = {key: data[key] for key in data.files}
        self.dirty = False

    def __call__(self, text: str) -> np.ndarray:
        key = hashlib.sha256(text.encode()).hexdigest()
        if key not in self.vectors:
            self.vectors[key] = self.embedder.query(text)
            self.dirty = True
        return self.vectors[key]

    def save(self) -> None:
        if self.dirty:
            CACHE.parent.mkdir(parents=True, exist_ok=True)
            np.savez(CACHE, **self.vectors)


def embed(rows: list[Example], cache: VectorCache) -> list[np.ndarray]:
    """The features of every view of every text, one row per view (the guard keeps the highest score)."""
    started = time.perf_counter()
    words = NoteWords(LEXICAL_DIM, LEXICAL_WEIGHT)
    out = []
    for i, row in enumerate(rows, start=1):
        out.append(np.stack([guard_features(cache(view), view, words) for view in views(row.text) or [row.text]]))
        if i % 200 == 0:
            print(f"  embedded {i}/{len(rows)} ({time.perf_counter() - started:.0f} s)", flush=True)
            cache.save()
    cache.save()
    return out


def scores(model: LogisticRegression, features: list[np.ndarray]) -> np.ndarray:
    return np.array([max(model.decision_function(f)) for f in features])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    parts = split()
    train = parts["train"] + measured_fresh_sets()
    print(f"train {len(train)} · held out {len(parts['held_out'])}")
    cache = VectorCache()
    train_vectors = embed(train, cache)
    x = np.stack([v[0] for v in train_vectors])
    y = np.array([r.malicious for r in train])
    search = GridSearchCV(
        LogisticRegression(class_weight="balanced", max_iter=5000),
        {"C": [10, 30, 100]},
        cv=StratifiedKFold(n_splits=5, shuffle=True, random_state=0),
        scoring="average_precision",
    )
    search.fit(x, y)
    print(f"C = {search.best_params_['C']} (cross-validated average precision {search.best_score_:.3f})")
    shuffled = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
    folds = cross_val_predict(search.best_estimator_, x, y, cv=shuffled, method="decision_function")
    ruled = np.array([bool(rule_findings(r.text)) for r in train])
    threshold = _threshold(np.asarray(folds), ruled, ~y)
    report("train, out of fold", train, np.asarray(folds), threshold)
    model = search.best_estimator_
    held_out = parts["held_out"]
    held_scores = scores(model, embed(held_out, cache))
    report("held out", held_out, held_scores, threshold)
    if args.write:
        MODEL.write_text(
            json.dumps(
                {
                    "embedder": cache.embedder.name,
                    "lexical_dim": LEXICAL_DIM,
                    "lexical_weight": LEXICAL_WEIGHT,
                    "weights": [round(float(w), 6) for w in model.coef_[0]],
                    "bias": round(float(model.intercept_[0]), 6),
                    "threshold": round(threshold, 4),
                    "trained": time.strftime("%Y-%m-%d"),
                    "examples": {"train": len(train), "held_out": len(held_out)},
                    "sources": sorted({r.source for r in train}),
                },
                indent=1,
            )
            + "\n"
        )
        print(f"wrote {MODEL}")


def measured_fresh_sets() -> list[Example]:
    """The fresh sets measured so far: attacks (disguised ones included) and benign notes, as training examples."""
    from tests.fixtures import memory_guard_fresh as fresh
    from tests.fixtures import memory_guard_fresh2 as fresh2
    from tests.fixtures import memory_guard_fresh3 as fresh3
    from tests.fixtures import memory_guard_fresh4 as fresh4

    rows: list[Example] = []
    measured = (
        ("fresh", fresh, fresh.obfuscated()),
        ("fresh-2", fresh2, fresh2.disguised()),
        ("fresh-3", fresh3, fresh3.disguised()),
        ("fresh-4", fresh4, fresh4.disguised()),
    )
    for name, module, disguised in measured:
        attacks = [text for group in module.ATTACKS.values() for text in group] + disguised
        rows += [Example(text, True, f"{name}-attack") for text in attacks]
        rows += [Example(text, False, f"{name}-benign") for text in module.BENIGN]
    return rows


def _threshold(values: np.ndarray, ruled: np.ndarray, benign: np.ndarray) -> float:
    """The lowest threshold whose benign false-positive rate (rules included) stays within TARGET_FP."""
    budget = int(TARGET_FP * benign.sum()) - int((ruled & benign).sum())
    candidates = np.sort(values[benign & ~ruled])[::-1]
    if budget < 0 or len(candidates) == 0:
        return float(candidates[0]) + 1e-3 if len(candidates) else 0.0
    return float(candidates[min(budget, len(candidates) - 1)]) + 1e-4


def report(name: str, rows: list[Example], values: np.ndarray, threshold: float) -> None:
    flagged_rules = np.array([bool(rule_findings(r.text)) for r in rows])
    flagged = (values >= threshold) | flagged_rules
    truth = np.array([r.malicious for r in rows])
    recall = flagged[truth].mean() if truth.any() else float("nan")
    fp = flagged[~truth].mean() if (~truth).any() else float("nan")
    print(
        f"{name}: recall {recall:.3f} ({flagged[truth].sum()}/{truth.sum()}) · false positives {fp:.3f} "
        f"({flagged[~truth].sum()}/{(~truth).sum()}) at threshold {threshold:.3f}"
    )
    by_source: dict[str, list[bool]] = {}
    for row, hit in zip(rows, flagged, strict=True):
        by_source.setdefault(f"{row.source} ({'attack' if row.malicious else 'benign'})", []).append(bool(hit))
    for source, hits in sorted(by_source.items()):
        print(f"    {source}: flagged {sum(hits)}/{len(hits)}")


if __name__ == "__main__":
    main()

"""The memory guard's semantic layer: does a note read like an instruction planted for later?

A logistic regression over two views of a note side by side: the bundled multilingual E5 vector, whose
meaning carries across languages (a Japanese or Korean injection scores like its English twin), and
its hashed words, word pairs and character grams (`NoteWords`), which tell apart notes made of the same
words with the opposite effect ("keep the keys in the vault" / "keep the keys in the README") where E5 puts them close.
bench/train_guard.py trains it; guard_model.json holds the weights, bias and threshold, calibrated out
of fold. The text is normalized first (normalize.py) and the highest score of its views counts. Where
E5 cannot run (no build for the platform) `score` is None and the rules stand alone.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
import re
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np

from orkas.engine.memory.normalize import views

log = logging.getLogger(__name__)
MODEL = Path(__file__).with_name("guard_model.json")


class Vectors(Protocol):
    def query(self, text: str) -> np.ndarray: ...


class NoteWords:
    """A note's words, word pairs and character 3- and 4-grams, hashed into `dim` signed buckets and
    scaled to length `weight`. Word pairs carry what a bag of words loses ("never want", "no need");
    the grams carry inflections and scripts without spaces."""

    def __init__(self, dim: int, weight: float = 1.0) -> None:
        self.dim, self.weight = dim, weight

    def __call__(self, text: str) -> np.ndarray:
        words = re.findall(r"\w+", text.casefold())
        features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
        features += [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
        features += ["#" + w[i : i + 4] for w in words for i in range(max(1, len(w) - 3))]
        out = np.zeros(self.dim, dtype=np.float32)
        for feature in features:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            out[int.from_bytes(digest[:4], "little") % self.dim] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(out))
        return out * (self.weight / norm) if norm else out


def guard_features(meaning: np.ndarray, text: str, words: NoteWords | None) -> np.ndarray:
    """What the regression reads for one view of a note; training (bench/train_guard.py) uses it too."""
    if words is None:
        return meaning
    return np.concatenate([meaning, words(text)])


class Semantic:
    def __init__(self, model: Path = MODEL, embedder: Callable[[], Vectors] | None = None) -> None:
        self._factory = embedder
        self._embedder: Vectors | None = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        self.weights = np.zeros(0, dtype=np.float32)
        self.bias, self.threshold, self.embedder_name = 0.0, math.inf, ""
        self.words: NoteWords | None = None
        try:
            data = json.loads(model.read_text())
            self.weights = np.asarray(data["weights"], dtype=np.float32)
            self.bias = float(data["bias"])
            self.threshold = float(data["threshold"])
            self.embedder_name = str(data["embedder"])
            if lexical := int(data.get("lexical_dim", 0)):
                self.words = NoteWords(lexical, float(data.get("lexical_weight", 1.0)))
        except (OSError, ValueError, KeyError, TypeError) as e:
            self._failed = f"its model file cannot be read ({type(e).__name__})"
            log.warning("memory guard: semantic layer off: %s", self._failed)

    @property
    def problem(self) -> str | None:
        """Why the layer cannot run here (None while it can)."""
        return self._failed

    def score(self, text: str) -> float | None:
        """The highest decision score of the text's views; None when the embedder cannot run."""
        embedder = self._load()
        if embedder is None:
            return None
        scores = (self.weights @ guard_features(embedder.query(v), v, self.words) for v in views(text) or [text])
        return max(float(score) for score in scores) + self.bias

    def probability(self, text: str) -> float | None:
        value = self.score(text)
        return None if value is None else 1 / (1 + math.exp(-value))

    def _load(self) -> Vectors | None:
        with self._lock:
            if self._embedder is None and self._failed is None:
                try:
                    if self._factory is not None:
                        self._embedder = self._factory()
                    else:
                        from orkas.engine.memory.embedders import E5Embedder

                        self._embedder = E5Embedder()
                except (ImportError, OSError, RuntimeError) as e:
                    self._failed = f"the bundled model cannot run here ({type(e).__name__})"
                    log.warning("memory guard: semantic layer off: %s", self._failed)
            return self._embedder


@cache
def default_semantic() -> Semantic:
    return Semantic()

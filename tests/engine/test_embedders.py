"""The OpenAI-compatible embedder against a real HTTP endpoint (a local fake speaking the wire format),
and switching a knowledge base from one embedder to another."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from orkas.engine.memory.embedders import HashingEmbedder, OpenAIEmbedder, Vectors
from orkas.engine.memory.kb import KnowledgeBase
from tests.fakes.openai import EMBEDDINGS_PATH, embeddings_responder
from tests.fakes.server import FakeServer, json_reply


@pytest.fixture
def endpoint() -> Iterator[FakeServer]:
    server = FakeServer(EMBEDDINGS_PATH, responder=embeddings_responder(dim=48)).start()
    yield server
    server.stop()


def test_an_openai_compatible_endpoint_embeds_in_order_and_finds_its_dimension(endpoint: FakeServer) -> None:
    embedder = OpenAIEmbedder(endpoint.url, "nomic-embed-text", api_key="sk-local")
    assert embedder.dim == 48 and embedder.name == f"{endpoint.url}#nomic-embed-text"
    vectors = embedder.passages(["alpha beta", "gamma delta", "alpha beta"])
    assert vectors.shape == (3, 48) and np.allclose(np.linalg.norm(vectors, axis=1), 1)
    assert np.allclose(vectors[0], vectors[2]) and not np.allclose(vectors[0], vectors[1])  # order kept
    assert np.allclose(embedder.query("alpha beta"), vectors[0])
    request = endpoint.requests[-1]
    assert request.headers["authorization"] == "Bearer sk-local"
    assert request.json == {"model": "nomic-embed-text", "input": ["alpha beta"]}


def test_an_endpoint_that_fails_says_what_went_wrong(endpoint: FakeServer) -> None:
    embedder = OpenAIEmbedder(endpoint.url, "m")
    endpoint.script(json_reply(500, {"error": {"message": "model not loaded"}}))
    with pytest.raises(OSError, match=r"said 500: .*model not loaded"):
        embedder.passages(["x"])
    endpoint.script(json_reply(200, {"data": "nothing useful"}))
    with pytest.raises(ValueError, match="not a list of embeddings"):
        embedder.passages(["x"])
    endpoint.script(json_reply(200, {"data": [{"index": 0, "embedding": [1.0, 0.0]}]}))
    with pytest.raises(ValueError, match=r"returned \(1, 2\), expected \(1, 48\)"):
        embedder.passages(["x"])
    endpoint.stop()
    with pytest.raises(OSError, match="did not answer"):
        OpenAIEmbedder(endpoint.url, "m")


class Counting(HashingEmbedder):
    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.embedded = 0

    def passages(self, texts: Sequence[str]) -> Vectors:
        self.embedded += len(texts)
        return super().passages(texts)


def test_switching_embedders_rebuilds_vectors_from_the_cache_and_embeds_only_what_is_new(tmp_path: Path) -> None:
    first, second = Counting(64), Counting(96)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder=first)
    for n in range(5):
        kb.add_text(f"doc{n}", f"document number {n} about topic {n}")
    assert kb.embed_pending() == 5 and first.embedded == 5
    kb.use_embedder(second)
    assert kb.pending() == 5 and kb.search("topic 3", mode="vector") == []  # nothing in the new space yet
    kb.embed_pending()
    assert second.embedded == 5 and kb.search("document number 3 about topic 3", mode="vector")[0].doc_id == "doc3"
    kb.use_embedder(None)  # keyword only
    assert kb.pending() == 0 and kb.search("topic", mode="keyword")
    with pytest.raises(ValueError, match="needs an embedder"):
        kb.search("topic", mode="vector")
    kb.use_embedder(first)  # back: every vector comes from the cache, no model call
    assert kb.embed_pending() == 5 and first.embedded == 5
    assert kb.search("document number 2 about topic 2", mode="vector")[0].doc_id == "doc2"
    kb.close()
    reopened = KnowledgeBase.open(tmp_path / "kb", embedder=first)
    assert (
        reopened.pending() == 0
        and reopened.search("document number 4 about topic 4", mode="vector")[0].doc_id == "doc4"
    )

"""The knowledge base's optional second stage: what reranking with a model costs, measured with the wire fake.

kb_search over the quality set's knowledge base (bench/.cache/quality-kb, E5; run bench.retrieval_quality
once first), on the test half's queries, side by side: the search alone (baseline), and the search with the
rerank stage (engine/memory/rerank.py) talking to a local fake Anthropic server that answers at once — so the
difference is Orkas's own cost (the deeper search, the request, the HTTP round trip, reading the answer), not a
model's. Also the request's size per search (tokens, estimated as the context meter does), which is what a
person pays for. What reranking would gain in quality needs a real model, which tests and benchmarks never
call: bench.retrieval_quality prints the ceiling (the top 30 in the ideal order).

    .venv/bin/python -m bench.rerank [--queries 60]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer, Recorded, Reply

from bench import retrieval_quality as quality
from orkas.app import build_registry, settings_from_env
from orkas.engine.abort import AbortSignal
from orkas.engine.memory.embedders import E5Embedder
from orkas.engine.memory.kb import KnowledgeBase
from orkas.engine.memory.kb_tools import KbSearch
from orkas.engine.memory.rerank import DEPTH, ModelReranker, request_text
from orkas.engine.tokens import estimate_tokens
from orkas.engine.tools.base import ToolContext


def answer(_request: Recorded) -> Reply:
    return Reply(events=wire.events([wire.text("3, 1, 2, 5, 4")]))


async def measure(kb: KnowledgeBase, queries: list[str], reranker: ModelReranker) -> dict[str, list[float]]:
    plain, reranked = KbSearch(kb), KbSearch(kb, reranker)
    times: dict[str, list[float]] = {"alone": [], "reranked": [], "tokens": []}
    for query in queries[:3]:  # warm: the model's first query, the HTTP connection
        for tool in (plain, reranked):
            await tool.execute(
                {"query": query}, ToolContext(workspace=Path("."), signal=AbortSignal(), tool_use_id="warm")
            )
    for query in queries:
        for name, tool in (("alone", plain), ("reranked", reranked)):  # alternated: drift hits both alike
            start = time.perf_counter()
            result = await tool.execute(
                {"query": query}, ToolContext(workspace=Path("."), signal=AbortSignal(), tool_use_id="t")
            )
            times[name].append((time.perf_counter() - start) * 1000)
            assert result.details is not None and "error" not in result.details.get("rerank", {})
        passages = [h.text for h in kb.search(query, DEPTH)]
        times["tokens"].append(estimate_tokens(request_text(query, passages)))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    folder = quality.HERE / ".cache" / "quality-kb"
    if not (folder / "kb.sqlite").exists():
        raise SystemExit("run `.venv/bin/python -m bench.retrieval_quality` first: it builds the knowledge base")
    kb = KnowledgeBase.open(folder, embedder=E5Embedder())
    split = quality.halves()
    queries = [q for part, _kind, q, _rel in quality.labelled() if split[part, q] == "test"][: args.queries]
    server = FakeServer("/v1/messages", responder=answer).start()
    registry = build_registry(settings_from_env({"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": server.url}))
    provider, model = registry.resolve("anthropic/claude-bench")

    async def run() -> dict[str, list[float]]:
        try:
            return await measure(kb, queries, ModelReranker(provider, model))
        finally:
            await registry.aclose()  # on the loop its connections were made on

    try:
        times = asyncio.run(run())
    finally:
        server.stop()
        kb.close()
    alone, reranked = statistics.median(times["alone"]), statistics.median(times["reranked"])
    p95 = {k: statistics.quantiles(v, n=20)[18] for k, v in times.items()}
    print(f"{len(queries)} queries of the test half, kb_search (k=8) alone and with the rerank stage (depth {DEPTH})")
    print(f"{'':32}{'median':>10}{'p95':>10}")
    print(f"{'search alone (baseline)':32}{alone:9.1f} ms{p95['alone']:7.1f} ms")
    print(f"{'search + rerank (fake answers)':32}{reranked:9.1f} ms{p95['reranked']:7.1f} ms")
    print(f"{'ratio':32}{reranked / alone:9.2f}×")
    tokens = times["tokens"]
    print(
        f"request per search: {statistics.median(tokens):,.0f} tokens median, {max(tokens):,.0f} at most "
        f"(+ the model's answer, ~{2 * DEPTH} tokens); a real model adds its own latency on top"
    )


if __name__ == "__main__":
    main()

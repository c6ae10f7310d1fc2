"""What `mcp_call` costs over calling the same MCP server with the SDK directly, on stdio and on streamable HTTP.

    .venv/bin/python -m bench.mcp [--calls 300] [--rounds 5]

Both sides talk to one real server (tests/fixtures/mcp_server.py, the official SDK) with a session already
open: the baseline is `mcp.Client.call_tool` on its own session; Orkas is the `mcp_call` tool as the run loop
calls it (schema check, the read-only path of the permission check, the hub's session, result conversion,
caps and the outside-text marking). Rounds alternate baseline and Orkas so drift hits both; the figure is
the median per call of each and their difference. The floor: ≤ 5 ms of overhead per call.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mcp

from orkas.adapter.connectors.config import Connectors
from orkas.app import connector_hub, settings_from_env
from orkas.engine.abort import AbortSignal
from orkas.engine.tools.base import ToolContext
from orkas.engine.tools.connectors import McpCall

SERVER = Path(__file__).parents[1] / "tests" / "fixtures" / "mcp_server.py"
ARGS = {"text": "a short line of text, as a lookup tool would take"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def per_call(call: object, n: int) -> float:
    began = time.perf_counter()
    for _ in range(n):
        await call()  # type: ignore[operator]
    return (time.perf_counter() - began) / n * 1000


async def measure(kind: str, target: str | mcp.StdioServerParameters, data: Path, calls: int, rounds: int) -> None:
    hub = connector_hub(settings_from_env({"ORKAS_HOME": str(data), "PATH": os.environ["PATH"]}))
    tool = McpCall(hub)
    ctx = ToolContext(workspace=data, signal=AbortSignal(), tool_use_id="bench")
    request = {"server": kind, "tool": "echo", "arguments": ARGS}
    direct_times, orkas_times = [], []
    async with mcp.Client(target) as client:

        async def direct() -> None:
            result = await client.call_tool("echo", ARGS)
            assert not result.is_error

        async def through_orkas() -> None:
            result = await tool.execute(request, ctx)
            assert not result.is_error

        await direct()
        await through_orkas()  # both sessions open and warm
        for _ in range(rounds):
            direct_times.append(await per_call(direct, calls))
            orkas_times.append(await per_call(through_orkas, calls))
    await hub.close()
    base, ours = statistics.median(direct_times), statistics.median(orkas_times)
    print(
        f"  {kind:<6} direct SDK {base:6.2f} ms/call   mcp_call {ours:6.2f} ms/call   "
        f"overhead {ours - base:+5.2f} ms ({ours / base:.2f}×)   {'✓' if ours - base <= 5 else '✗'} ≤ 5 ms"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"{args.rounds} rounds × {args.calls} calls of a read-only tool, sessions open (median of rounds)")
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        Connectors(data / "connectors.json", None).add("stdio", command=[sys.executable, str(SERVER)])
        await measure("stdio", mcp.StdioServerParameters(command=sys.executable, args=[str(SERVER)]), data, args.calls,
                      args.rounds)  # fmt: skip
        port = free_port()
        server = subprocess.Popen([sys.executable, str(SERVER), "--http", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.05)
            url = f"http://127.0.0.1:{port}/mcp"
            Connectors(data / "connectors.json", None).add("http", url=url)
            await measure("http", url, data, args.calls, args.rounds)
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    asyncio.run(main())

"""`orkas bridge` as an agent CLI meets it: MCP's stdio transport, one JSON-RPC message per line. Whatever odd
message comes in — ids of the wrong type, NaN, deep nesting, an empty batch, a lone surrogate, an unhashable
cancellation — it answers with valid JSON-RPC (or nothing, for a notification) and goes on serving: the next ping
is answered."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ODD = [
    b'{"jsonrpc":"2.0","id":[1],"method":"tools/call","params":{"name":"x"}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"a":1}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"\\ud800"}',
    b"[" * 200_000 + b"]" * 200_000,
    b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
    b"[]",
    b'[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}]',
    b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"kb_search","arguments":{"query":1}}}',
    b"not json at all",
]


def strict(line: bytes) -> Any:
    return json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} on stdout: not JSON"))


@pytest.mark.parametrize("odd", ODD, ids=[f"odd-{n}" for n in range(len(ODD))])
def test_an_odd_message_gets_valid_json_rpc_and_the_bridge_goes_on(odd: bytes, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("t")
    env = {"ORKAS_BRIDGE_SOCKET": str(tmp_path / "none.sock"), "ORKAS_BRIDGE_TOKEN_FILE": str(token),
           "ORKAS_BRIDGE_CAPABILITIES": "skills", "PATH": "/usr/bin:/bin"}  # fmt: skip
    ping = b'{"jsonrpc":"2.0","id":"last","method":"ping"}'
    done = subprocess.run([sys.executable, "-m", "orkas.cli", "bridge"], input=odd + b"\n" + ping + b"\n",
                          env=env, capture_output=True, timeout=60)  # fmt: skip
    answers = [strict(line) for line in done.stdout.splitlines() if line.strip()]
    assert all(a.get("jsonrpc") == "2.0" and ("result" in a or "error" in a) for a in answers), answers
    assert answers[-1] == {"jsonrpc": "2.0", "id": "last", "result": {}}, (answers, done.stderr[-2000:])
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-2000:]

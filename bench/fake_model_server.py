"""A zero-latency fake Anthropic server for benchmarks, run in its own process.

A prompt containing `ROUNDS=N` gets N rounds of a `noop` tool call, then a text answer; any other
prompt gets a text answer at once. Streaming and non-streaming requests are both answered, so any
client library can drive it. Prints its URL on the first line of stdout, then serves until killed.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer, Recorded, Reply, json_reply

ROUNDS = re.compile(r"ROUNDS=(\d+)")


def _first_user_text(messages: list[dict[str, Any]]) -> str:
    content = messages[0]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


def _tool_rounds_so_far(messages: list[dict[str, Any]]) -> int:
    return sum(
        1
        for m in messages
        if m["role"] == "assistant"
        and isinstance(m["content"], list)
        and any(b.get("type") == "tool_use" for b in m["content"])
    )


def respond(request: Recorded) -> Reply:
    body = request.json
    messages = body["messages"]
    match = ROUNDS.search(_first_user_text(messages))
    done_rounds = _tool_rounds_so_far(messages)
    if match and done_rounds < int(match.group(1)):
        block = wire.tool_use("noop", {"i": done_rounds}, id=f"toolu_{done_rounds:04d}")
    else:
        block = wire.text("All done: the task is complete.")
    if body.get("stream"):
        return Reply(events=wire.events([block]))
    stop = "tool_use" if block["type"] == "tool_use" else "end_turn"
    return json_reply(
        200,
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    )


def main() -> None:
    server = FakeServer(wire.PATH, responder=respond).start()
    print(json.dumps({"url": server.url}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())

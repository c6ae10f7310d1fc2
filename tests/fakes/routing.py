"""Answering each actor of a group by the system prompt it was sent: one queue of replies per actor."""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from typing import Any

from tests.fakes import anthropic as a_wire
from tests.fakes.server import Recorded, Reply


class ByActor:
    """Routes each request to the next reply of the actor whose marker is in its system prompt."""

    def __init__(self, markers: dict[str, str]) -> None:
        self.markers = markers
        self.replies: dict[str, list[Reply]] = defaultdict(list)
        self.seen: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.lock = threading.Lock()

    def add(self, actor: str, *replies: Reply) -> None:
        self.replies[actor].extend(replies)

    def __call__(self, request: Recorded) -> Reply:
        body = request.json
        system = json.dumps(body.get("system", ""))
        actor = next((a for a, marker in self.markers.items() if marker in system), "unknown")
        with self.lock:
            self.seen[actor].append(body)
            queue = self.replies[actor]
            if not queue:
                return a_wire.error(500, "api_error", f"nothing scripted for {actor}")
            return queue.pop(0)

    @property
    def total(self) -> int:
        return sum(len(q) for q in self.replies.values())


def parallel_dispatch(router: ByActor, final: str = "Both are done.") -> None:
    """The commander hands the coder and the critic their tasks in one turn, then answers `final`."""
    router.add(
        "commander",
        a_wire.message(
            a_wire.tool_use("dispatch_to", {"to": "coder", "message": "write it"}, id="toolu_a"),
            a_wire.tool_use("dispatch_to", {"to": "critic", "message": "review it"}, id="toolu_b"),
        ),
        a_wire.reply_text(final),
    )

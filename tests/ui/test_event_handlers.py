"""Every event type the server can send on a conversation's stream has a handler in the page: the UI
dispatches on `on_${type}`, so an event without one would be dropped silently (as `queued_applied` once
was). The vocabulary comes from adapter/wire.py, which spells each type once."""

from __future__ import annotations

import re
from pathlib import Path

from orkas.adapter.wire import WIRE_VERSION, wire_types

FRONTEND = Path(__file__).parents[2] / "frontend" / "js"


def test_every_conversation_event_type_has_a_handler() -> None:
    chat = (FRONTEND / "chat.js").read_text(encoding="utf-8")
    handlers = set(re.findall(r"^  on_(\w+)\(", chat, re.M))
    types = wire_types()
    assert len(types) >= 20
    assert not types - handlers, f"no handler in chat.js for {sorted(types - handlers)}"
    assert not handlers - types, f"handlers for events the server never sends: {sorted(handlers - types)}"


def test_the_page_knows_the_wire_version() -> None:
    api = (FRONTEND / "api.js").read_text(encoding="utf-8")
    assert f"export const WIRE_VERSION = {WIRE_VERSION};" in api

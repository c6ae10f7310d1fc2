"""Group conversations through the real `orkas serve`: agents made over the API, members added to a
conversation that already has history (it becomes a group, nothing lost), a dispatch streamed with
actor-tagged events, the bus as the history, the floor after a hand-off across a server restart."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx

from tests.fakes import anthropic as a_wire
from tests.fakes.routing import ByActor
from tests.fakes.server import FakeServer
from tests.ui.conftest import App, start_app


def api(app: App) -> httpx.Client:
    return httpx.Client(base_url=app.base, headers={"X-Orkas-Token": app.token}, timeout=30)


def finished(client: httpx.Client, conversation: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view: dict[str, Any] = client.get(f"/api/conversations/{conversation}/messages").json()
        if not view["running"]:
            return view
        time.sleep(0.05)
    raise AssertionError("the turn did not end")


def test_a_conversation_becomes_a_group_and_dispatches(anthropic_server: FakeServer, tmp_path: Path) -> None:
    router = ByActor({"coder": "CODER-BOT", "commander": "commander of a team", "solo": "Tools available"})
    router.add("solo", a_wire.reply_text("Hello, I am one agent."))
    router.add(
        "commander",
        a_wire.message(
            a_wire.text("Asking the coder."), a_wire.tool_use("dispatch_to", {"to": "coder", "message": "write f"})
        ),
        a_wire.reply_text("The coder wrote it."),
    )
    router.add("coder", a_wire.reply_text("def f(): pass"))
    anthropic_server.script(*[router] * router.total)
    app = start_app(tmp_path / "home", ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    try:
        with api(app) as client:
            made = client.post(
                "/api/agents", json={"name": "coder", "description": "writes code", "prompt": "You are CODER-BOT."}
            )
            assert made.status_code == 201, made.text
            assert (
                client.post("/api/agents", json={"name": "coder", "description": "x", "prompt": "y"}).status_code == 400
            )
            assert (
                client.post("/api/agents", json={"name": "../x", "description": "x", "prompt": "y"}).status_code == 400
            )
            conversation = client.post("/api/conversations", json={}).json()["id"]
            client.post(f"/api/conversations/{conversation}/messages", json={"text": "hi"})
            solo = finished(client, conversation)
            assert solo["group"] is None and solo["messages"][-1]["role"] == "assistant"

            assert (
                client.put(f"/api/conversations/{conversation}/members", json={"members": ["ghost"]}).status_code == 400
            )
            members = client.put(f"/api/conversations/{conversation}/members", json={"members": ["coder"]}).json()
            assert members["members"] == ["coder"] and members["floor"] == "commander"
            migrated = finished(client, conversation)["group"]
            assert [(m["from"], m["text"]) for m in migrated] == [
                ("user", "hi"),
                ("commander", "Hello, I am one agent."),
            ]

            before = finished(client, conversation)
            client.post(f"/api/conversations/{conversation}/messages", json={"text": "write f please"})
            view = finished(client, conversation)
            log = app.home / "conversations" / conversation / "events.jsonl"  # what every view was sent
            seen = [e for e in map(json.loads, log.read_text().splitlines()) if e["seq"] > before["after"]]
            actors = {e.get("actor") for e in seen if e["type"] == "text_delta"}
            assert actors == {"commander", "coder"}
            assert [e["type"] for e in seen][-2:] == ["turn_end", "idle"] and seen[-2]["ok"] is True
            texts = [(m["from"], m["text"]) for m in view["group"] if not m.get("dispatch")]
            assert texts[-4:] == [
                ("user", "write f please"),
                ("commander", "Asking the coder."),
                ("coder", "def f(): pass"),
                ("commander", "The coder wrote it."),
            ]
            assert view["messages"] == []  # a group's history is its bus
        commander_saw = json.dumps(router.seen["commander"][0]["messages"])
        assert "Hello, I am one agent." in commander_saw  # the old transcript became the commander's
        assert commander_saw.count("write f please") == 1  # told once, not replayed with the history
    finally:
        app.stop()
    anthropic_server.verify()

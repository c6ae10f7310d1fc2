"""The conversations API in process (Api's test client), behind the same guard."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from orkas.adapter.conversations.runtime import ConversationRuntime
from orkas.adapter.conversations.store import Conversation, ConversationStore
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.runner import Agent, RunConfig
from orkas.server.app import create_app
from tests.fakes.scripted import ScriptedProvider, text
from tests.server.sockets import receive_json

TOKEN = "t" * 43
HOST = {"host": "127.0.0.1:8123"}


def client(tmp_path: Path, provider: ScriptedProvider | None = None) -> TestClient:
    scripted = provider or ScriptedProvider()

    def make_agent(conversation: Conversation) -> Agent:
        return Agent(
            providers=ProviderRegistry({"scripted": scripted}),
            config=RunConfig(model="scripted/m"),
            workspace=conversation.workspace_path,
        )

    runtime = ConversationRuntime(ConversationStore(tmp_path), make_agent)
    app = create_app(token=TOKEN, port=8123, runtime=runtime, providers=["scripted"])
    return TestClient(app, base_url="http://127.0.0.1:8123", headers={"X-Orkas-Token": TOKEN})


def test_create_list_rename_search_and_delete(tmp_path: Path) -> None:
    api = client(tmp_path)
    made = api.post("/api/conversations", json={"title": "Quarterly plan"})
    assert made.status_code == 201
    ident = made.json()["id"]
    assert [c["id"] for c in api.get("/api/conversations").json()] == [ident]
    assert api.patch(f"/api/conversations/{ident}", json={"title": "Q3 plan"}).json()["title"] == "Q3 plan"
    assert api.patch(f"/api/conversations/{ident}", json={"title": ""}).status_code == 422
    assert api.get("/api/search", params={"q": "q3"}).json()[0]["conversation"]["id"] == ident
    bad = api.post("/api/conversations", json={"workspace": str(tmp_path / "missing")})
    assert bad.status_code == 400 and "not a folder" in bad.json()["detail"]
    deleted = api.request("DELETE", f"/api/conversations/{ident}", json={})
    assert deleted.status_code == 204 and api.get("/api/conversations").json() == []
    assert api.get(f"/api/conversations/{ident}/messages").status_code == 404
    assert api.request("DELETE", f"/api/conversations/{ident}", json={}).status_code == 404
    assert [c["id"] for c in api.get("/api/recycle").json()] == [ident]
    restored = api.post(f"/api/recycle/{ident}/restore", json={})
    assert restored.status_code == 200 and restored.json()["title"] == "Q3 plan"
    assert [c["id"] for c in api.get("/api/conversations").json()] == [ident]
    assert api.post(f"/api/recycle/{ident}/restore", json={}).status_code == 404
    assert api.get(f"/api/conversations/{ident}/processes").json() == []
    assert api.post(f"/api/conversations/{ident}/processes/stop", json={}).json() == {"stopped": 0}
    assert api.get("/api/conversations/0123456789abcdef0123456789abcdef/processes").status_code == 404
    assert api.get("/api/conversations/not.an.id/messages").status_code == 400  # malformed, not missing


def test_a_message_streams_back_over_the_websocket(tmp_path: Path) -> None:
    with client(tmp_path, ScriptedProvider(text("Hi from the agent."))) as api:  # one event loop, as in the app
        streams_back(api)


def test_a_rename_is_heard_by_every_view_of_the_chat(tmp_path: Path) -> None:
    # A phone with the chat open kept the old name in its header: a rename said nothing to the views.
    with client(tmp_path) as api:
        ident = api.post("/api/conversations", json={}).json()["id"]
        with api.websocket_connect(f"/api/events?token={TOKEN}&conversation={ident}", headers=HOST) as socket:
            assert receive_json(socket)["type"] == "hello"
            assert api.patch(f"/api/conversations/{ident}", json={"title": "Garden plans"}).status_code == 200
            said = receive_json(socket)
        assert (said["type"], said["title"]) == ("title_changed", "Garden plans")


def streams_back(api: TestClient) -> None:
    ident = api.post("/api/conversations", json={}).json()["id"]
    with api.websocket_connect(f"/api/events?token={TOKEN}&conversation={ident}", headers=HOST) as socket:
        assert receive_json(socket)["type"] == "hello"
        assert api.post(f"/api/conversations/{ident}/messages", json={"text": "hello"}).status_code == 202
        seen = []
        while not seen or seen[-1]["type"] != "idle":
            seen.append(receive_json(socket))
    assert [e["type"] for e in seen][-2:] == ["done", "idle"] and seen[-2]["text"] == "Hi from the agent.", seen
    url = f"/api/events?token={TOKEN}&conversation={ident}&after={seen[-3]['seq']}"
    with api.websocket_connect(url, headers=HOST) as socket:
        receive_json(socket)  # hello
        assert [receive_json(socket)["type"] for _ in range(2)] == ["done", "idle"]  # catch-up, no duplicates
    history = api.get(f"/api/conversations/{ident}/messages").json()["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert (
        api.post(f"/api/conversations/{ident}/answers", json={"question_id": "x", "decision": "deny"}).status_code
        == 404
    )
    assert api.post(f"/api/conversations/{ident}/stop", json={}).json() == {"stopped": False}


def test_search_finds_words_with_quotes_and_backslashes_as_written(tmp_path: Path) -> None:
    provider = ScriptedProvider(text('Saved to C:\\Users\\ana\\notes.txt, "as asked".'))
    with client(tmp_path, provider) as api:
        ident = api.post("/api/conversations", json={"title": "Files"}).json()["id"]
        url = f"/api/events?token={TOKEN}&conversation={ident}&after=1000000"  # only what comes next
        with api.websocket_connect(url, headers=HOST) as ws:
            receive_json(ws)  # hello
            sent = api.post(f"/api/conversations/{ident}/messages", json={"text": 'Save "my notes"'})
            assert sent.status_code == 202
            while receive_json(ws)["type"] != "idle":
                pass
        for words in ('"my notes"', "c:\\users\\ana", '"as asked"'):  # stored escaped in the transcript's JSON
            found = api.get("/api/search", params={"q": words}).json()
            assert [hit["conversation"]["id"] for hit in found] == [ident], (words, found)
    provider.verify()


def test_a_refused_change_changes_nothing_and_a_socket_for_no_id_at_all_is_closed_with_a_reason(
    tmp_path: Path,
) -> None:
    with client(tmp_path) as api:
        ident = api.post("/api/conversations", json={"title": "Garden"}).json()["id"]
        refused = api.patch(f"/api/conversations/{ident}", json={"title": "T2", "pinned": True, "agent": "ghost"})
        assert refused.status_code == 400 and "no agent 'ghost'" in refused.json()["detail"]
        [kept] = api.get("/api/conversations").json()
        assert (kept["title"], kept["pinned"]) == ("Garden", False)  # the title was once saved before the refusal

        assert api.get(f"/api/conversations/{ident}%0A/messages").status_code == 400  # $ let a last newline by
        assert api.post(f"/api/conversations/{ident}/stop").json() == {"stopped": False}  # idle: nothing to stop
        assert api.post("/api/conversations/0123456789abcdef0123456789abcdef/stop").status_code == 404  # no such chat
        for wrong in ("..%2F..", "a%2Fb", "%00", "x" * 5000, f"{ident}%0A"):
            with api.websocket_connect(f"/api/events?token={TOKEN}&conversation={wrong}", headers=HOST) as socket:
                assert receive_json(socket)["type"] == "hello"
                with pytest.raises(WebSocketDisconnect) as closed:
                    socket.receive_json()
            assert closed.value.code == 1008, wrong

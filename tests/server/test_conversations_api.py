"""The conversations API in process (FastAPI's test client), behind the same guard."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from orkas.adapter.conversations import ConversationStore
from orkas.server.app import create_app

TOKEN = "t" * 43


def client(tmp_path: Path) -> TestClient:
    app = create_app(token=TOKEN, port=8123, conversations=ConversationStore(tmp_path), providers=["anthropic"])
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

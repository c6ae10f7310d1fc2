"""Edit and resend, another answer, retry and continue: the conversation forks, and every version stays
reachable through the arrows (POST /versions). Real runtime, real transcript files, a scripted model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from httpx import Response
from starlette.testclient import TestClient

from orkas.core.errors import ProviderError
from orkas.engine.messages import TextBlock
from orkas.engine.turn import CONTINUE_NOTE
from tests.fakes.scripted import ScriptedProvider, end, text, tool_call
from tests.server.sockets import receive_json
from tests.server.test_conversations_api import HOST, TOKEN, client


def until_idle(api: TestClient, ident: str, action: Callable[[], Response]) -> list[dict[str, Any]]:
    with api.websocket_connect(f"/api/events?token={TOKEN}&conversation={ident}&after=1000000", headers=HOST) as ws:
        receive_json(ws)  # hello
        response = action()
        assert response.status_code == 202, response.text
        seen: list[dict[str, Any]] = []
        while not seen or seen[-1]["type"] != "idle":
            seen.append(receive_json(ws))
    return seen


def texts(api: TestClient, ident: str) -> list[str]:
    messages = api.get(f"/api/conversations/{ident}/messages").json()["messages"]
    return ["".join(b.get("text", "") for b in m["content"]) for m in messages if m["role"] != "app"]


def test_another_answer_then_switch_between_the_versions(tmp_path: Path) -> None:
    provider = ScriptedProvider(text("First answer."), text("Second answer."))
    with client(tmp_path, provider) as api:
        ident = api.post("/api/conversations", json={}).json()["id"]
        until_idle(api, ident, lambda: api.post(f"/api/conversations/{ident}/messages", json={"text": "Hello"}))
        question = api.get(f"/api/conversations/{ident}/messages").json()["messages"][0]["id"]
        again = f"/api/conversations/{ident}/messages/{question}/regenerate"
        events = until_idle(api, ident, lambda: api.post(again, json={}))
        assert events[0]["type"] == "history_changed"
        assert texts(api, ident) == ["Hello", "Second answer."]
        body = api.get(f"/api/conversations/{ident}/messages").json()
        # Versions of the answer: the person's message keeps its id, the arrows go on the answer.
        assert body["messages"][0]["id"] == question
        answer = body["messages"][1]["id"]
        assert body["versions"] == [{"after": question, "message_id": answer, "index": 1, "count": 2}]

        pick = lambda index: api.post(f"/api/conversations/{ident}/versions", json={"after": question, "index": index})  # noqa: E731
        assert pick(0).status_code == 200
        assert texts(api, ident) == ["Hello", "First answer."]
        assert api.get(f"/api/conversations/{ident}/messages").json()["versions"][0]["index"] == 0
        pick(1)
        assert texts(api, ident) == ["Hello", "Second answer."]
        bad = api.post(f"/api/conversations/{ident}/versions", json={"after": question, "index": 7})
        assert bad.status_code == 400 and "no such version" in bad.json()["detail"]
    provider.verify()


def test_edit_continues_from_the_edit_and_keeps_the_old_branch(tmp_path: Path) -> None:
    provider = ScriptedProvider(text("A1"), text("A2"), text("Edited answer"))
    with client(tmp_path, provider) as api:
        ident = api.post("/api/conversations", json={}).json()["id"]
        send = lambda words: lambda: api.post(f"/api/conversations/{ident}/messages", json={"text": words})  # noqa: E731
        until_idle(api, ident, send("one"))
        until_idle(api, ident, send("two"))
        second = api.get(f"/api/conversations/{ident}/messages").json()["messages"][2]["id"]
        edit = lambda: api.post(f"/api/conversations/{ident}/messages/{second}/edit", json={"text": "TWO"})  # noqa: E731
        until_idle(api, ident, edit)
        assert texts(api, ident) == ["one", "A1", "TWO", "Edited answer"]
        # The model saw the edited history only: the old branch is not sent.
        last = provider.requests[-1]
        assert ["".join(b.text for b in m.content if isinstance(b, TextBlock)) for m in last.messages] == [
            "one",
            "A1",
            "TWO",
        ]
        versions = api.get(f"/api/conversations/{ident}/messages").json()["versions"]
        assert [(v["index"], v["count"]) for v in versions] == [(1, 2)]
        api.post(f"/api/conversations/{ident}/versions", json={"after": versions[0]["after"], "index": 0})
        assert texts(api, ident) == ["one", "A1", "two", "A2"]
        empty = api.post(f"/api/conversations/{ident}/messages/{second}/edit", json={"text": "  "})
        assert empty.status_code == 422


def test_a_title_the_app_made_follows_an_edit_of_the_first_message_never_one_the_person_typed(tmp_path: Path) -> None:
    provider = ScriptedProvider(*(text(f"A{n}") for n in range(1, 5)), text("B1"), text("B2"))
    with client(tmp_path, provider) as api:
        ident = api.post("/api/conversations", json={}).json()["id"]
        send = lambda words: lambda: api.post(f"/api/conversations/{ident}/messages", json={"text": words})  # noqa: E731
        title = lambda: api.get(f"/api/conversations/{ident}").json()["title"]  # noqa: E731
        until_idle(api, ident, send("about zebras"))
        until_idle(api, ident, send("and lions"))
        ids = [m["id"] for m in api.get(f"/api/conversations/{ident}/messages").json()["messages"]]

        def edit(at: int, words: str) -> Callable[[], Response]:
            return lambda: api.post(f"/api/conversations/{ident}/messages/{ids[at]}/edit", json={"text": words})

        events = until_idle(api, ident, edit(2, "and tigers"))
        assert title() == "about zebras" and "title_changed" not in [e["type"] for e in events]
        events = until_idle(api, ident, edit(0, "about  quokkas"))
        assert title() == "about quokkas"
        assert [e["title"] for e in events if e["type"] == "title_changed"] == ["about quokkas"]

        typed = api.post("/api/conversations", json={"title": "My zoo"}).json()["id"]
        until_idle(api, typed, lambda: api.post(f"/api/conversations/{typed}/messages", json={"text": "about owls"}))
        owls = api.get(f"/api/conversations/{typed}/messages").json()["messages"][0]["id"]
        path = f"/api/conversations/{typed}/messages/{owls}/edit"
        until_idle(api, typed, lambda: api.post(path, json={"text": "about bats"}))
        assert api.get(f"/api/conversations/{typed}").json()["title"] == "My zoo"
    provider.verify()


def test_retry_after_an_error_and_nothing_is_lost_on_disk(tmp_path: Path) -> None:
    failing = [ProviderError("billing: the account is out of credit", kind="billing")]
    provider = ScriptedProvider(failing, text("Worked this time."))
    with client(tmp_path, provider) as api:
        ident = api.post("/api/conversations", json={}).json()["id"]
        events = until_idle(api, ident, lambda: api.post(f"/api/conversations/{ident}/messages", json={"text": "Hi"}))
        assert any(e["type"] == "error" for e in events)
        question = api.get(f"/api/conversations/{ident}/messages").json()["messages"][0]["id"]
        until_idle(api, ident, lambda: api.post(f"/api/conversations/{ident}/messages/{question}/regenerate", json={}))
        messages = api.get(f"/api/conversations/{ident}/messages").json()["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"] and texts(api, ident)[-1] == "Worked this time."
    folder = tmp_path / "conversations" / ident / "branches"
    index = json.loads((folder / "index.json").read_text())
    (stored,) = [b for b in index[question] if b != "live"]  # a version of the answer to "Hi"
    kept = (folder / f"{stored}.jsonl").read_text()
    assert "out of credit" in kept  # the failed try is kept as the other version


def test_refusals_are_clear(tmp_path: Path) -> None:
    gate_provider = ScriptedProvider(tool_call("read", {"path": "x.txt"}), text("done"))
    with client(tmp_path, gate_provider) as api:
        ident = api.post("/api/conversations", json={}).json()["id"]
        until_idle(api, ident, lambda: api.post(f"/api/conversations/{ident}/messages", json={"text": "read it"}))
        messages = api.get(f"/api/conversations/{ident}/messages").json()["messages"]
        tool_results = [m["id"] for m in messages if m["role"] == "user" and m["content"][0]["type"] == "tool_result"]
        assert tool_results, messages
        refused = api.post(f"/api/conversations/{ident}/messages/{tool_results[0]}/regenerate", json={})
        assert refused.status_code == 404 and "not in this conversation" in refused.json()["detail"]
        missing = api.post(f"/api/conversations/{ident}/messages/nope/edit", json={"text": "x"})
        assert missing.status_code == 404
        unknown = api.post("/api/conversations/0123456789abcdef0123456789abcdef/messages/x/regenerate", json={})
        assert unknown.status_code == 404


def test_continue_after_a_cut_off_answer(tmp_path: Path) -> None:
    cut = [end(TextBlock(text="The list: one, two"), stop="max_tokens")]
    provider = ScriptedProvider(cut, cut, text(", three."))  # the engine goes on by itself once
    with client(tmp_path, provider) as api:
        ident = api.post("/api/conversations", json={}).json()["id"]
        events = until_idle(api, ident, lambda: api.post(f"/api/conversations/{ident}/messages", json={"text": "List"}))
        assert next(e for e in events if e["type"] == "done")["stop_reason"] == "max_tokens"
        until_idle(api, ident, lambda: api.post(f"/api/conversations/{ident}/continue", json={}))
        assert texts(api, ident)[-1] == ", three."
        assert texts(api, ident)[-2] == CONTINUE_NOTE


def test_per_conversation_model_and_instructions_are_remembered(tmp_path: Path) -> None:
    with client(tmp_path) as api:
        ident = api.post("/api/conversations", json={}).json()["id"]
        changed = api.patch(
            f"/api/conversations/{ident}",
            json={"model": "scripted/big", "instructions": "In French.", "temperature": 0.3, "reasoning": "high"},
        ).json()
        assert (changed["model"], changed["instructions"], changed["temperature"], changed["reasoning"]) == (
            "scripted/big",
            "In French.",
            0.3,
            "high",
        )
        assert api.get(f"/api/conversations/{ident}").json()["model"] == "scripted/big"
        assert api.patch(f"/api/conversations/{ident}", json={"temperature": 5}).status_code == 422
        assert api.patch(f"/api/conversations/{ident}", json={"reasoning": "max"}).status_code == 422
        assert api.patch(f"/api/conversations/{ident}", json={"reasoning": None}).status_code == 400
        back = api.patch(f"/api/conversations/{ident}", json={"model": "", "temperature": None}).json()
        assert (back["model"], back["temperature"], back["instructions"]) == ("", None, "In French.")

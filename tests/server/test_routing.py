"""The servers' router (server/routing.py) answers as FastAPI did, which the page, the phone and the tests read:
arguments from the path, the query and a JSON body, checked; 422 with pydantic's errors under `detail`; an
HTTPException's detail and headers; 204 with no body; a WebSocket with a wrong query closed with 1008."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import BaseModel, Field
from starlette.responses import PlainTextResponse
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from orkas.server.routing import Api, HTTPException, Query, Request, WebSocket


class Note(BaseModel):
    text: str = Field(min_length=1)


@dataclass
class Saved:
    folder: Path
    count: int


def make() -> TestClient:
    api = Api()

    @api.post("/notes/{number}", status_code=201)
    async def add(number: int, body: Note, request: Request, days: int = Query(default=30, ge=1, le=366)) -> dict:
        return {"number": number, "text": body.text, "days": days, "host": request.url.hostname}

    @api.post("/undo")
    async def undo(body: Note | None = None, loud: bool = False) -> dict:
        return {"text": body.text if body else None, "loud": loud}

    @api.get("/saved")
    async def saved() -> Saved:
        return Saved(Path("/tmp/x"), 2)

    @api.get("/text", response_class=PlainTextResponse)
    async def text(name: str = Query(min_length=1, max_length=5)) -> str:
        return f"hello {name}"

    @api.delete("/notes/{number}", status_code=204)
    async def remove(number: int) -> None:
        if number == 0:
            raise HTTPException(status_code=404, detail="no note 0", headers={"X-Why": "zero"})

    @api.websocket("/events")
    async def events(socket: WebSocket, after: int = 0) -> None:
        await socket.accept()
        await socket.send_json({"after": after})
        await socket.close()

    return TestClient(api)


def test_arguments_come_from_the_path_the_query_and_the_body_checked() -> None:
    client = make()
    answer = client.post("/notes/7?days=2&ignored=1", json={"text": "milk"})
    assert answer.status_code == 201
    assert answer.json() == {"number": 7, "text": "milk", "days": 2, "host": "testserver"}
    assert client.post("/undo?loud=yes").json() == {"text": None, "loud": True}  # an optional body left out
    assert client.post("/undo", json={"text": "x"}).json() == {"text": "x", "loud": False}
    assert client.get("/saved").json() == {"folder": "/tmp/x", "count": 2}
    plain = client.get("/text?name=Ana")
    assert (plain.text, plain.headers["content-type"].split(";")[0]) == ("hello Ana", "text/plain")


def test_wrong_values_answer_422_with_where_and_why() -> None:
    client = make()
    wrong = client.post("/notes/seven?days=999", content=b"{not json")
    assert wrong.status_code == 422
    where = [(e["loc"][0], e["type"]) for e in wrong.json()["detail"]]
    assert where == [("path", "int_parsing"), ("query", "less_than_equal"), ("body", "json_invalid")]
    missing = client.post("/notes/1", content=b"")
    assert missing.status_code == 422 and missing.json()["detail"][0]["loc"] == ["body"]
    short = client.post("/notes/1", json={"text": ""})
    assert short.status_code == 422 and short.json()["detail"][0]["loc"] == ["body", "text"]
    assert client.get("/text").status_code == 422  # a required query parameter
    assert client.get("/text?name=toolongname").status_code == 422


def test_refusals_and_empty_answers() -> None:
    client = make()
    gone = client.delete("/notes/0")
    assert (gone.status_code, gone.json(), gone.headers["x-why"]) == (404, {"detail": "no note 0"}, "zero")
    done = client.delete("/notes/3")
    assert (done.status_code, done.content) == (204, b"")
    assert client.get("/nowhere").json() == {"detail": "Not Found"}
    assert client.get("/undo").status_code == 405


def test_a_socket_reads_its_query_and_a_wrong_one_is_closed_with_1008() -> None:
    client = make()
    with client.websocket_connect("/events?after=4") as socket:
        assert socket.receive_json() == {"after": 4}
    with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect("/events?after=four") as socket:
        socket.receive_json()
    assert closed.value.code == 1008


def test_bodies_are_read_as_fastapi_read_them_and_what_json_cannot_carry_stays_a_422() -> None:
    client = make()
    utf16 = '{"text": "leite"}'.encode("utf-16")  # with its byte-order mark
    assert client.post("/undo", content=utf16).json()["text"] == "leite"
    for body in (b'{"text": NaN}', b'{"text": Infinity}', b'{"text": 1e400}'):
        refused = client.post("/notes/1", content=body)
        assert refused.status_code == 422, body
        assert refused.json()["detail"][0]["loc"] == ["body", "text"]
    assert client.post("/notes/1", content=b"\xff\xfe\x00garbage").status_code == 422
    missing = client.get("/text?other=1").json()["detail"][0]
    assert (missing["type"], missing["loc"], missing["input"]) == ("missing", ["query", "name"], None)


def test_a_lone_surrogate_is_answered_in_json_not_a_500() -> None:
    client = make()
    for path in ("/notes/1", "/undo"):
        answer = client.post(path, content=b'{"text": "\\ud800"}')
        assert answer.status_code in (200, 201, 422), answer.text
        assert "detail" in answer.json() or answer.json()["text"] == "\ud800"

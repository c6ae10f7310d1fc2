"""The local API rejects everything that is not the app itself: one test per rejection, against a
real `orkas serve` subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.conftest import subprocess_env

ORKAS = str(Path(sys.executable).parent / "orkas")


class Served:
    def __init__(self, url: str, process: subprocess.Popen[str]) -> None:
        parts = urlsplit(url)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.port = parts.port
        self.token = parse_qs(parts.query)["token"][0]
        self.process = process

    def client(self, **headers: str) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers=headers, timeout=5)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    process = subprocess.Popen(
        [ORKAS, "serve"],
        env=subprocess_env(ORKAS_HOME=str(tmp_path_factory.mktemp("home"))),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    yield Served(url, process)
    process.terminate()
    _out, err = process.communicate(timeout=10)
    assert Served(url, process).token not in err  # the token is never logged


def test_the_first_line_is_the_url_with_a_strong_token(served: Served) -> None:
    assert served.base.startswith("http://127.0.0.1:") and len(served.token) >= 40


def test_a_request_without_the_token_is_refused(served: Served) -> None:
    with served.client() as client:
        assert client.get("/api/status").status_code == 401
        assert client.get("/api/status", headers={"X-Orkas-Token": "wrong"}).status_code == 401
        ok = client.get("/api/status", headers={"X-Orkas-Token": served.token})
    assert ok.status_code == 200 and ok.json()["version"]


def test_a_foreign_host_header_is_refused(served: Served) -> None:
    with served.client(**{"X-Orkas-Token": served.token, "Host": f"evil.example:{served.port}"}) as client:
        response = client.get("/api/status")
    assert response.status_code == 403 and "127.0.0.1 and localhost" in response.json()["error"]


def test_a_foreign_origin_is_refused(served: Served) -> None:
    with served.client(**{"X-Orkas-Token": served.token}) as client:
        foreign = client.get("/api/status", headers={"Origin": "http://evil.example"})
        own = client.get("/api/status", headers={"Origin": f"http://localhost:{served.port}"})
    assert foreign.status_code == 403 and own.status_code == 200


def test_a_text_plain_post_gets_415_and_json_works(served: Served) -> None:
    with served.client(**{"X-Orkas-Token": served.token}) as client:
        plain = client.post("/api/conversations", content="{}", headers={"Content-Type": "text/plain"})
        form = client.post("/api/conversations", data={"a": "b"})
        created = client.post("/api/conversations", json={"title": "First"})
        read = client.get(f"/api/conversations/{created.json()['id']}/messages")
        missing = client.get("/api/conversations/nope/messages")
        shouted = client.patch(
            f"/api/conversations/{created.json()['id']}", content='{"pinned": true}',
            headers={"Content-Type": "Application/JSON; charset=utf-8"},
        )  # fmt: skip
        bodiless = client.delete(f"/api/conversations/{created.json()['id']}")  # no body, no type: nothing to check
    assert plain.status_code == 415 and form.status_code == 415
    assert created.status_code == 201 and read.status_code == 200 and read.json()["messages"] == []
    assert missing.status_code == 404
    assert shouted.status_code == 200 and bodiless.status_code == 204


def test_no_cors_ever(served: Served) -> None:
    with served.client() as client:
        preflight = client.options(
            "/api/status",
            headers={"Origin": f"http://127.0.0.1:{served.port}", "Access-Control-Request-Method": "POST"},
        )
        normal = client.get("/api/status", headers={"X-Orkas-Token": served.token})
    assert preflight.status_code == 403
    assert not [h for h in normal.headers if h.lower().startswith("access-control-")]


def test_the_token_in_a_url_opens_only_the_event_socket(served: Served) -> None:
    for path in ("/api/conversations", "/api/settings", "/api/status", "/api/kb"):
        in_url = httpx.get(f"{served.base}{path}?token={served.token}", timeout=10)
        assert in_url.status_code == 401, path
    assert (
        httpx.get(f"{served.base}/api/status", headers={"X-Orkas-Token": served.token}, timeout=10).status_code == 200
    )


async def test_the_websocket_needs_the_token(served: Served) -> None:
    url = f"ws://127.0.0.1:{served.port}/api/events"
    with pytest.raises(InvalidStatus) as info:
        async with connect(url):
            pass
    assert info.value.response.status_code == 403
    async with connect(f"{url}?token={served.token}") as socket:
        hello = json.loads(await socket.recv())
    assert hello["type"] == "hello"


def test_the_page_holds_no_data_and_takes_the_token_out_of_the_address_bar(served: Served) -> None:
    with served.client() as client:
        page = client.get("/")  # the UI shell is public: it has no data and no token in it
        assert page.status_code == 200 and served.token not in page.text
        assert client.get("/api/conversations").status_code == 401  # everything with data needs the token
        script = client.get("/static/js/api.js").text
        assert 'history.replaceState(null, "", "/")' in script and "sessionStorage" in script
        assert "unsafe-inline" not in page.text  # no inline script may run

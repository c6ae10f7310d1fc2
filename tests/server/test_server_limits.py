"""The local server cannot be exhausted: bodies are capped while they are read, uploads stream to disk,
slow or silent connections are dropped, a flood of them does not stop it answering, and its data
folder is its owner's alone.

The first group drives a real `orkas serve` with default settings; the timing tests run the same
server in process (`host()`, as the desktop window does) with the deadlines shortened, so they take
seconds rather than minutes.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from websockets.asyncio.client import connect

from orkas.app import settings_from_env
from orkas.host import Hosted, host
from orkas.server import connections, security
from tests.conftest import subprocess_env
from tests.server.test_local_api_security import ORKAS

MB = 1024 * 1024


class Served:
    def __init__(self, url: str, process: subprocess.Popen[str], home: Path) -> None:
        parts = urlsplit(url)
        self.port = parts.port or 0
        self.base = f"http://127.0.0.1:{self.port}"
        self.token = parse_qs(parts.query)["token"][0]
        self.process = process
        self.home = home

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers={"X-Orkas-Token": self.token}, timeout=30)

    def peak_memory(self) -> int:
        """The server's resident-memory high-water mark, in bytes."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmHWM")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("limits") / "data"
    process = subprocess.Popen(
        [ORKAS, "serve"],
        env=subprocess_env(ORKAS_HOME=str(home)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    yield Served(process.stdout.readline().strip(), process, home)
    process.terminate()
    process.communicate(timeout=10)


def raw_request(port: int, head: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(head.encode())
    return sock


def read_status(sock: socket.socket) -> int:
    """Read one whole response (head and Content-Length body) and return its status."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise AssertionError(f"the server closed the connection without answering: {data!r}")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(
        (int(line.split(b":")[1]) for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")), 0
    )
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            break
        body += chunk
    return int(head.split()[1])


def test_a_200mb_upload_is_refused_while_it_streams_and_never_sits_in_memory(served: Served) -> None:
    with served.client() as client:
        chat = client.post("/api/conversations", json={}).json()["id"]
    before = served.peak_memory()
    # Chunked, so no Content-Length gives it away: the route has to count what it writes.
    sock = raw_request(
        served.port,
        f"POST /api/conversations/{chat}/attachments?name=big.bin HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
        f"X-Orkas-Token: {served.token}\r\nContent-Type: application/octet-stream\r\n"
        "Transfer-Encoding: chunked\r\n\r\n",
    )
    block = b"x" * MB
    sent = 0
    try:
        while sent < 200 * MB:
            sock.sendall(b"%x\r\n%s\r\n" % (len(block), block))
            sent += len(block)
        sock.sendall(b"0\r\n\r\n")
    except OSError:
        pass  # the server answered 413 and closed: the rest of the body is not wanted
    status = read_status(sock)
    sock.close()
    grew = served.peak_memory() - before
    assert status == 413
    assert grew < 40 * MB, f"the server's peak memory grew by {grew // MB} MB"
    folder = served.home / "attachments" / chat
    assert not folder.exists() or not any(folder.iterdir()), "a refused upload left a file behind"


def test_a_declared_200mb_upload_is_refused_before_its_body(served: Served) -> None:
    with served.client() as client:
        chat = client.post("/api/conversations", json={}).json()["id"]
    sock = raw_request(
        served.port,
        f"POST /api/conversations/{chat}/attachments?name=big.bin HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
        f"X-Orkas-Token: {served.token}\r\nContent-Type: application/octet-stream\r\n"
        f"Content-Length: {200 * MB}\r\n\r\n",
    )
    assert read_status(sock) == 413
    sock.close()


def test_an_upload_within_the_cap_is_stored_whole_and_private(served: Served) -> None:
    with served.client() as client:
        chat = client.post("/api/conversations", json={}).json()["id"]
        data = os.urandom(3 * MB)
        stored = client.post(
            f"/api/conversations/{chat}/attachments",
            params={"name": "photo.bin"},
            content=data,
            headers={"Content-Type": "application/octet-stream"},
        )
    assert stored.status_code == 201, stored.text
    path = Path(stored.json()["path"])
    assert path.read_bytes() == data and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_5mb_json_body_is_refused(served: Served) -> None:
    big = json.dumps({"title": "x" * (5 * MB)})
    with served.client() as client:
        declared = client.post("/api/conversations", content=big, headers={"Content-Type": "application/json"})
        chunked = client.post(
            "/api/conversations",
            content=iter([big[i : i + MB].encode() for i in range(0, len(big), MB)]),
            headers={"Content-Type": "application/json"},
        )
        fine = client.post("/api/conversations", json={"title": "small"})
    assert declared.status_code == 413 and chunked.status_code == 413
    assert fine.status_code == 201


def test_a_flood_of_silent_connections_does_not_stop_it_answering(served: Served) -> None:
    flood: list[socket.socket] = []
    try:
        for i in range(3000):
            sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
            if i % 2:
                sock.sendall(b"GET /api/status HT")  # half a request line, then nothing
            flood.append(sock)
        started = time.monotonic()
        with served.client() as client:
            answer = client.get("/api/status")
        assert answer.status_code == 200
        assert time.monotonic() - started < 5
        time.sleep(0.5)
        still_open = sum(1 for sock in flood if not closed_within(sock, 0.001))
    finally:
        for sock in flood:
            sock.close()
    assert still_open <= connections.MAX_CONNECTIONS


def test_the_data_folder_and_its_files_are_the_owners_alone(served: Served) -> None:
    with served.client() as client:
        client.post("/api/conversations", json={"title": "private"})
        client.put("/api/settings", json={"command_timeout": 120})
    assert stat.S_IMODE(served.home.stat().st_mode) == 0o700
    loose = [
        f"{p.relative_to(served.home)} {oct(stat.S_IMODE(p.stat().st_mode))}"
        for p in served.home.rglob("*")
        if p.is_file() and stat.S_IMODE(p.stat().st_mode) & 0o077
    ]
    assert not loose, loose


def test_an_existing_open_data_folder_is_tightened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    done = subprocess.run(
        [ORKAS, "status"], env=subprocess_env(ORKAS_HOME=str(data)), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(data.stat().st_mode) == 0o700


# In process, with the deadlines shortened.


class Quick(connections.GuardedH11):
    header_timeout = 0.5
    max_connections = 8


@pytest.fixture
def quick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Hosted]:
    monkeypatch.setattr(security, "BODY_IDLE", 0.5)
    served = host(settings_from_env({"ORKAS_HOME": str(tmp_path / "data")}))
    served.server.config.http = Quick
    served.start_in_background()
    deadline = time.monotonic() + 10
    while not served.server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield served
    served.stop()
    served.listener.close()


def closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
        return True
    except TimeoutError:
        return False
    except OSError:
        return True


def test_a_silent_connection_is_closed_after_the_header_deadline(quick: Hosted) -> None:
    sock = socket.create_connection(("127.0.0.1", quick.port))
    started = time.monotonic()
    assert closed_within(sock, 5)
    assert 0.4 < time.monotonic() - started < 3


def test_a_head_trickled_a_byte_at_a_time_is_cut_off(quick: Hosted) -> None:
    sock = socket.create_connection(("127.0.0.1", quick.port))
    started = time.monotonic()
    head = f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{quick.port}\r\nX-Orkas-Token: {quick.token}\r\n\r\n"
    cut = False
    for byte in head.encode():
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            cut = True
            break
        time.sleep(0.1)  # each byte would reset uvicorn's own keep-alive timer
        if time.monotonic() - started > 3:
            break
    cut = cut or closed_within(sock, 1)
    assert cut and time.monotonic() - started < 4


def test_a_keep_alive_connection_gets_a_fresh_deadline_for_each_request(quick: Hosted) -> None:
    head = f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{quick.port}\r\nX-Orkas-Token: {quick.token}\r\n\r\n"
    sock = socket.create_connection(("127.0.0.1", quick.port), timeout=5)
    for _ in range(3):  # quick requests on one connection, each inside its deadline: all answered
        sock.sendall(head.encode())
        assert read_status(sock) == 200
        time.sleep(0.3)  # less than the deadline, but together more than it
    assert closed_within(sock, 3)  # then idle: closed


def test_a_stalled_body_is_dropped(quick: Hosted) -> None:
    sock = raw_request(
        quick.port,
        f"POST /api/conversations HTTP/1.1\r\nHost: 127.0.0.1:{quick.port}\r\nX-Orkas-Token: {quick.token}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    )
    assert read_status(sock) == 408
    sock.close()


def test_a_stalled_upload_is_aborted_and_leaves_nothing(quick: Hosted) -> None:
    base = f"http://127.0.0.1:{quick.port}"
    with httpx.Client(base_url=base, headers={"X-Orkas-Token": quick.token}) as client:
        chat = client.post("/api/conversations", json={}).json()["id"]
    sock = raw_request(
        quick.port,
        f"POST /api/conversations/{chat}/attachments?name=a.bin HTTP/1.1\r\nHost: 127.0.0.1:{quick.port}\r\n"
        f"X-Orkas-Token: {quick.token}\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000\r\n\r\nabc",
    )
    assert read_status(sock) == 400
    sock.close()
    folder = quick.services.attachments.folder(chat)
    assert not folder.exists() or not any(folder.iterdir())


def test_past_the_cap_the_longest_silent_connection_makes_room(quick: Hosted) -> None:
    silent = [socket.create_connection(("127.0.0.1", quick.port)) for _ in range(Quick.max_connections)]
    time.sleep(0.1)
    with httpx.Client(base_url=f"http://127.0.0.1:{quick.port}", headers={"X-Orkas-Token": quick.token}) as client:
        assert client.get("/api/status").status_code == 200
    assert closed_within(silent[0], 0.3)  # the oldest silent one went to make room
    for sock in silent:
        sock.close()


async def test_a_websocket_outlives_the_header_deadline(quick: Hosted) -> None:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{quick.port}") as client:
        made = await client.post("/api/conversations", json={}, headers={"X-Orkas-Token": quick.token})
    chat = made.json()["id"]
    async with connect(f"ws://127.0.0.1:{quick.port}/api/events?token={quick.token}&conversation={chat}") as ws:
        assert json.loads(await ws.recv())["type"] == "hello"
        await asyncio.sleep(4 * Quick.header_timeout)  # the upgraded socket is no longer the header timer's
        pong = await ws.ping()
        await asyncio.wait_for(pong, 2)

"""A real `orkas serve --mirror` for tests: the desktop API, the mirror's HTTPS API, pairing."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import subprocess_env
from tests.fakes.server import FakeServer
from tests.ui.conftest import ORKAS


@dataclass
class Mirrored:
    process: subprocess.Popen[str]
    base: str  # the desktop API
    token: str
    mirror: str  # https://127.0.0.1:PORT
    fingerprint: str
    home: Path

    def desktop(self, method: str, path: str, body: Any = None) -> httpx.Response:
        headers = {"X-Orkas-Token": self.token}
        return httpx.request(method, f"{self.base}{path}", json=body, headers=headers, timeout=10)

    def phone(
        self, method: str, path: str, token: str = "", body: Any = None, *, source: str = "", **extra: Any
    ) -> httpx.Response:
        """A request as a phone makes it (`source`: the local address it comes from, e.g. 127.0.0.2)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        headers.update(extra.pop("headers", {}))
        transport = httpx.HTTPTransport(verify=self.tls(), local_address=source) if source else None
        with httpx.Client(verify=self.tls(), timeout=10, transport=transport) as client:
            return client.request(method, f"{self.mirror}{path}", json=body, headers=headers, **extra)

    def tls(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.home / "mirror" / "mirror-cert.pem"))

    def pair(self, name: str = "Pixel") -> tuple[str, str]:
        code = self.desktop("POST", "/api/mirror/pairings", {}).json()["code"]
        answer = self.phone("POST", "/mirror/api/v1/pair", body={"code": code, "device_name": name}).json()
        return answer["device_token"], answer["device_id"]


@contextmanager
def run_mirrored(anthropic_server: FakeServer, tmp_path: Path, port: int = 0, **preferences: Any) -> Iterator[Mirrored]:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"preferences": {"auto_title": False, **preferences}}))
    running = start_mirrored(anthropic_server, home, port)
    try:
        yield running
    finally:
        stop_mirrored(running)  # the process running now, after any restart_mirrored


def start_mirrored(anthropic_server: FakeServer, home: Path, port: int) -> Mirrored:
    """`orkas serve --mirror` over `home`; returns once the mirror answers."""
    process = subprocess.Popen(
        [ORKAS, "serve", "--mirror", "--mirror-host", "127.0.0.1", "--mirror-port", str(port)],
        env=subprocess_env(
            ORKAS_HOME=str(home), ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    line = process.stdout.readline().strip()
    assert line.startswith("mirror: https://127.0.0.1:"), (line, process.stderr.read() if process.poll() else "")
    _, mirror, fingerprint = line.split()
    running = Mirrored(process, url.split("/?", 1)[0], url.split("token=", 1)[1], mirror, fingerprint, home)
    deadline = time.time() + 10
    while time.time() < deadline:  # the mirror serves once the loop runs
        try:
            running.phone("GET", "/mirror/api/v1/conversations")
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    return running


def stop_mirrored(running: Mirrored) -> None:
    running.process.terminate()
    try:
        running.process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        running.process.kill()
        running.process.communicate()


def restart_mirrored(running: Mirrored, anthropic_server: FakeServer) -> Mirrored:
    """Orkas quits and starts again over the same data and mirror port (a new desktop token, as always);
    `running` is updated in place, so a fixture's teardown stops the new process."""
    stop_mirrored(running)
    return start_again(running, anthropic_server)


def start_again(running: Mirrored, anthropic_server: FakeServer) -> Mirrored:
    """Orkas, stopped, starts again over the same data and mirror port; `running` is updated in place."""
    port = int(running.mirror.rsplit(":", 1)[1])
    fresh = start_mirrored(anthropic_server, running.home, port)
    for name in ("process", "base", "token", "mirror", "fingerprint"):
        setattr(running, name, getattr(fresh, name))
    return running


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """CPU time of the process, or of one of its threads (the main one runs the event loop: every event
    and every socket; the knowledge base embeds finished conversations on worker threads meanwhile)."""
    where = f"/proc/{pid}/task/{thread}/stat" if thread else f"/proc/{pid}/stat"
    fields = Path(where).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle(pid: int, quiet: float = 0.02, window: float = 0.5, most: float = 300) -> None:
    """Wait until the server is idle: a finished conversation is indexed into the knowledge base (its
    embeddings take seconds of CPU), which must not land in a phone's bill."""
    deadline = time.time() + most
    while time.time() < deadline:
        before = cpu_seconds(pid)
        time.sleep(window)
        if cpu_seconds(pid) - before < quiet * window:
            return

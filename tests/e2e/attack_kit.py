"""What the attack tests share: a planted home folder, a real listener, and `orkas run` driven by the wire fake.

The attacker is the model: the fake Anthropic server scripts its tool calls. The victim is a person
running `orkas run` with default settings and nobody at the keyboard (standard input is not a
terminal, so every question is answered "no"). A secret is planted in the home folder; a TCP
listener on 127.0.0.1 records anything that reaches it.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import subprocess_env
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer

ORKAS = str(Path(sys.executable).parent / "orkas")
SECRET = "SECRET-7d41c0ffee-do-not-leak"


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection and the bytes it received."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port: int = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                data = b""
                try:
                    while chunk := conn.recv(65536):
                        data += chunk
                        if b"\r\n\r\n" in data:
                            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
                            break
                except OSError:
                    pass
                self.received.append(data)

    def close(self) -> None:
        self.sock.close()


@dataclass
class Victim:
    """A home folder with secrets in it, a workspace inside it, and a data folder."""

    root: Path
    home: Path = field(init=False)
    workspace: Path = field(init=False)
    data: Path = field(init=False)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.workspace = self.home / "project"
        self.data = self.root / "orkas-data"
        for folder in (self.workspace, self.home / ".ssh", self.home / ".config" / "gcloud", self.data):
            folder.mkdir(parents=True, exist_ok=True)
        (self.home / ".bash_history").write_text(f"export TOKEN={SECRET}\n")
        (self.home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
        (self.home / ".config" / "gcloud" / "credentials.db").write_text(SECRET)
        (self.home / "Documents").mkdir()
        (self.home / "Documents" / "taxes.txt").write_text(SECRET)
        (self.workspace / "a").write_text("one\n")
        (self.workspace / "b").write_text("two\n")
        (self.workspace / "notes.md").write_text("# notes\n")

    def env(self, server: FakeServer, **extra: str) -> dict[str, str]:
        return subprocess_env(
            ANTHROPIC_API_KEY="sk-ant-test",
            ANTHROPIC_BASE_URL=server.url,
            HOME=str(self.home),
            ORKAS_HOME=str(self.data),
            **extra,
        )

    def run(self, server: FakeServer, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """`orkas run` with default settings; nobody answers questions (stdin is not a terminal)."""
        return subprocess.run(
            [ORKAS, "run", "do the task", "--workspace", str(self.workspace), *args],
            env=self.env(server),
            cwd=self.workspace,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


def script_tool_calls(server: FakeServer, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """The model makes each call in turn (one per reply), then says it is done."""
    replies = [a_wire.message(a_wire.tool_use(name, args, id=f"toolu_{i}")) for i, (name, args) in enumerate(calls)]
    server.script(*replies, a_wire.reply_text("done"))


def tool_results(server: FakeServer) -> dict[str, str]:
    """What the model was told about each of its calls: tool_use id → result text."""
    results: dict[str, str] = {}
    for request in server.requests:
        for message in request.json["messages"]:
            if message["role"] != "user" or isinstance(message["content"], str):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    text = content if isinstance(content, str) else json.dumps(content)
                    results[block["tool_use_id"]] = text
    return results

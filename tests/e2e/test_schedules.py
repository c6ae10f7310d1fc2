"""Scheduled work as a person meets it, with the real `orkas serve --mirror`, a paired phone and the wire-level fake
model: a schedule made in Settings fires in the running app, its run asks for an approval that the phone answers; a
schedule that fell due while Orkas was closed runs once when it starts again; `orkas schedule` and
`orkas serve --background` say plainly whether anything fires them."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

import httpx
import websockets

from tests.conftest import subprocess_env
from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.mirror_helpers import Mirrored, restart_mirrored, run_mirrored
from tests.ui.conftest import ORKAS, start_app

DEADLINE = 30.0


def wait_for(check: object, what: str, timeout: float = DEADLINE) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()  # type: ignore[operator]
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout} s")


def schedules(running: Mirrored) -> dict[str, object]:
    answer: dict[str, object] = running.desktop("GET", "/api/schedules").json()
    return answer


def test_a_schedule_fires_in_the_running_app_and_its_approval_is_answered_from_the_phone(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    anthropic_server.script(
        wire.message(wire.tool_use("write_file", {"path": "summary.md", "content": "Nothing changed.\n"})),
        wire.reply_text("Summary written."),
    )
    with run_mirrored(anthropic_server, tmp_path) as running:
        token, _ = running.pair("Pixel")
        chat = running.desktop("POST", "/api/conversations", {"workspace": str(work)}).json()["id"]
        assert schedules(running)["firing"] == "here"  # this app fires them: said as such

        async def approve_from_the_phone() -> dict[str, object]:
            url = running.mirror.replace("https://", "wss://") + "/mirror/api/v1/alerts"
            headers = {"Authorization": f"Bearer {token}"}
            async with websockets.connect(url, ssl=running.tls(), additional_headers=headers) as socket:
                assert json.loads(await asyncio.wait_for(socket.recv(), DEADLINE))["type"] == "hello"
                made = await asyncio.to_thread(running.desktop, "POST", "/api/schedules",
                                               {"conversation": chat, "prompt": "summarise what changed",
                                                "when": "in 1 second"})  # fmt: skip
                assert made.status_code == 201, made.text
                question = json.loads(await asyncio.wait_for(socket.recv(), DEADLINE))
                assert question["type"] == "permission_request" and question["conversation"] == chat
                answer = {"question_id": question["id"], "decision": "once"}
                answered = await asyncio.to_thread(
                    running.phone, "POST", f"/mirror/api/v1/conversations/{chat}/answers", token, answer
                )
                assert answered.status_code == 200
                return dict(made.json())

        made = asyncio.run(approve_from_the_phone())
        wait_for(lambda: (work / "summary.md").exists(), "the scheduled run wrote its file")
        assert (work / "summary.md").read_text() == "Nothing changed.\n"
        prompts = [json.dumps(r.json["messages"][0]) for r in anthropic_server.requests]
        assert "summarise what changed" in prompts[0]
        [kept] = wait_for(lambda: [s for s in schedules(running)["schedules"] if s["last"]], "the run recorded")  # type: ignore[index, union-attr]
        assert kept["id"] == made["id"] and kept["last"]["outcome"] == "started" and kept["next"] is None
        assert not kept["enabled"]  # a one-shot runs once


def test_a_schedule_due_while_orkas_was_closed_runs_once_at_the_next_start(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    with run_mirrored(anthropic_server, tmp_path) as running:
        chat = running.desktop("POST", "/api/conversations", {}).json()["id"]
        running.process.terminate()
        running.process.communicate(timeout=20)
        env = subprocess_env(ORKAS_HOME=str(running.home))
        added = subprocess.run([ORKAS, "schedule", "add", "check the build", "--when", "in 1s", "--session", chat],
                               env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
        assert added.returncode == 0, added.stderr
        assert "Nothing is running to fire these schedules now" in added.stderr  # said plainly
        due = json.loads((running.home / "schedules.json").read_text())["schedules"][0]["next"]
        wait_for(lambda: time.time() > due + 0.5, "the schedule's time passed while Orkas was closed")
        anthropic_server.script(wire.reply_text("The build is green."))
        restarted = restart_mirrored(running, anthropic_server)
        [ran] = wait_for(lambda: [s for s in schedules(restarted)["schedules"] if s["last"]], "fired at start")  # type: ignore[index, union-attr]
        assert ran["last"]["outcome"] == "started"
        wait_for(lambda: len(anthropic_server.requests) == 1, "the one run's model call")
        listed = subprocess.run([ORKAS, "schedule", "list"], env=env, capture_output=True, text=True, timeout=60)
        assert "fired by the Orkas process" in listed.stderr and "check the build" in listed.stdout
    assert len(anthropic_server.requests) == 1  # once, not again


def test_serve_in_the_background_fires_schedules_after_the_terminal_is_gone_and_stops(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    home = tmp_path / "data"
    env = subprocess_env(ORKAS_HOME=str(home), ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    anthropic_server.script(wire.reply_text("Checked."))
    work = tmp_path / "work"
    work.mkdir()
    added = subprocess.run([ORKAS, "schedule", "add", "check", "--when", "in 2s", "--workspace", str(work)],
                           env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert added.returncode == 0, added.stderr
    started = subprocess.run([ORKAS, "serve", "--background"], env=env, capture_output=True, text=True, timeout=90)
    try:
        assert started.returncode == 0 and started.stdout.startswith("http://127.0.0.1:"), started.stderr
        assert "serves in the background" in started.stderr
        wait_for(lambda: len(anthropic_server.requests) == 1, "the background server fired the schedule")
    finally:
        stopped = subprocess.run([ORKAS, "serve", "--stop"], env=env, capture_output=True, text=True, timeout=60)
    assert stopped.returncode == 0 and "stopped the background Orkas" in stopped.stdout
    listed = subprocess.run([ORKAS, "schedule", "list"], env=env, capture_output=True, text=True, timeout=60)
    assert "Nothing is running to fire these schedules now" in listed.stderr


def test_the_agent_proposes_a_schedule_and_only_the_persons_yes_makes_it_in_any_mode(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    from tests.e2e.test_cli import anthropic_env
    from tests.e2e.test_cli_consent import Terminal

    proposal = {"prompt": "summarise what changed in this folder", "when": "every weekday at 8:00"}
    anthropic_server.script(wire.message(wire.tool_use("schedule", proposal)), wire.reply_text("Not scheduled."))
    unattended = subprocess.run([ORKAS, "run", "every weekday at 8, summarise what changed", "--mode", "auto"],
                                env=anthropic_env(anthropic_server), cwd=tmp_path, stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=90)  # fmt: skip
    assert unattended.returncode == 0, unattended.stderr
    home = Path(subprocess_env()["ORKAS_HOME"])
    assert not (home / "schedules.json").exists()  # auto mode does not accept it for the person

    anthropic_server.script(wire.message(wire.tool_use("schedule", proposal)), wire.reply_text("Scheduled."))
    terminal = Terminal(anthropic_server, tmp_path, "every weekday at 8, summarise what changed")
    asked = terminal.question()
    assert b"schedule wants to run" in asked and b"every weekday at 8:00" in asked
    assert b"summarise what changed in this folder" in asked
    terminal.type("o")
    terminal.finish()
    [made] = json.loads((home / "schedules.json").read_text())["schedules"]
    assert made["cron"] == "0 8 * * 1-5" and made["prompt"] == "summarise what changed in this folder"


def test_a_bad_time_from_the_terminal_makes_nothing_and_the_new_chat_is_listed(tmp_path: Path) -> None:
    env = subprocess_env(ORKAS_HOME=str(tmp_path / "data"))
    work = tmp_path / "work"
    work.mkdir()

    def orkas(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([ORKAS, *args], env=env, capture_output=True, text=True, timeout=60)

    refused = orkas("schedule", "add", "check", "--when", "every blursday", "--workspace", str(work))
    assert refused.returncode == 2 and "'blursday' is not a day of the week" in refused.stderr
    assert orkas("session", "list").stdout == ""  # no conversation was made for it
    made = orkas("schedule", "add", "check the build", "--when", "every day at 9", "--workspace", str(work))
    assert made.returncode == 0, made.stderr
    [listed] = [json.loads(line) for line in orkas("session", "list", "--json").stdout.splitlines()]
    assert listed["title"] == "check the build" and listed["workspace"] == str(work)
    assert listed["id"] in made.stdout


def test_a_schedule_whose_budget_is_spent_does_not_run_and_says_why(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    from tests.e2e.test_cli import anthropic_env

    work = tmp_path / "work"
    work.mkdir()
    with run_mirrored(anthropic_server, tmp_path) as running:
        assert running.desktop("PUT", "/api/budget", {"per_day": 0.0001}).status_code == 200
        anthropic_server.script(wire.reply_text("That cost something."))
        env = {**anthropic_env(anthropic_server), "ORKAS_HOME": str(running.home)}
        spent = subprocess.run([ORKAS, "run", "hello", "--workspace", str(work)], env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=90)  # fmt: skip
        assert spent.returncode == 0, spent.stderr
        chat = running.desktop("POST", "/api/conversations", {"workspace": str(work)}).json()["id"]
        made = running.desktop("POST", "/api/schedules", {"conversation": chat, "prompt": "go", "when": "in 1s"})
        assert made.status_code == 201
        [kept] = wait_for(lambda: [s for s in schedules(running)["schedules"] if s["last"]], "the schedule's turn")  # type: ignore[index, union-attr]
        assert kept["last"]["outcome"].startswith("not run: the daily budget of $0.0001 is reached")
    assert len(anthropic_server.requests) == 1  # only the run that spent it


def test_a_schedule_without_a_provider_says_why_it_did_not_run_and_unknown_ids_are_404(tmp_path: Path) -> None:
    app = start_app(tmp_path / "home")  # no model key anywhere
    try:
        headers = {"X-Orkas-Token": app.token}
        chat = httpx.post(f"{app.base}/api/conversations", json={}, headers=headers).json()["id"]
        made = httpx.post(f"{app.base}/api/schedules", headers=headers,
                          json={"conversation": chat, "prompt": "go", "when": "in 1s"})  # fmt: skip
        assert made.status_code == 201

        def last() -> object:
            return [s for s in httpx.get(f"{app.base}/api/schedules", headers=headers).json()["schedules"] if s["last"]]

        [kept] = wait_for(last, "the schedule's turn")  # type: ignore[misc]
        assert kept["last"]["outcome"].startswith("not run:") and "provider" in kept["last"]["outcome"]
        for method in ("PATCH", "DELETE"):
            gone = httpx.request(method, f"{app.base}/api/schedules/s-nothing", headers=headers,
                                 json={"enabled": True} if method == "PATCH" else None)  # fmt: skip
            assert gone.status_code == 404 and "no schedule" in gone.json()["detail"]
    finally:
        app.stop()

"""Self-evolution's signals from a running `orkas serve`, once the person turned learning on: every run of a named
agent (a conversation bound to it) is counted into `<data>/signals/YYYY-MM-DD.jsonl` — a correction in Chinese
and a real tool error noticed, a provider that kept answering 529 counted as retries, never as the agent's
error; the commander's runs never are."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx

from orkas.engine.evolution import RunSignals, score_runs
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import start_app


def signals(data: Path, count: int, timeout: float = 20) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [
            json.loads(line) for f in sorted((data / "signals").glob("*.jsonl")) for line in f.read_text().splitlines()
        ]
        if len(lines) >= count:
            return lines
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} runs recorded")


def learning_on(data: Path, agent: str | None = "analyst") -> None:
    """Learning turned on, and a named agent to bind a conversation to."""
    data.mkdir(parents=True, exist_ok=True)
    preferences = {"learning": True, "offered": True, "auto_title": False}  # no title calls in the script
    (data / "settings.json").write_text(json.dumps({"preferences": preferences}))
    if agent:
        folder = data / "agents" / agent
        folder.mkdir(parents=True)
        (folder / "AGENT.md").write_text(f"---\nname: {agent}\ndescription: totals\n---\nYou are {agent}.\n")


def bound_chat(app: Any, agent: str = "analyst") -> str:
    headers = {"X-Orkas-Token": app.token}
    chat = httpx.post(f"{app.base}/api/conversations", json={}, headers=headers).json()["id"]
    bound = httpx.patch(f"{app.base}/api/conversations/{chat}", json={"agent": agent}, headers=headers)
    assert bound.status_code == 200 and bound.json()["agent"] == agent, bound.text
    return str(chat)


def test_each_run_is_counted_on_the_machine(anthropic_server: FakeServer, tmp_path: Path) -> None:
    home = tmp_path / "person"
    home.mkdir()
    data = tmp_path / "data"
    learning_on(data)
    app = start_app(data, HOME=str(home), ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    headers = {"X-Orkas-Token": app.token}
    try:
        anthropic_server.script(
            a_wire.message(a_wire.tool_use("read_file", {"path": "totals.csv"}, id="t1")),
            a_wire.reply_text("按月汇总如下。"),
            a_wire.error(529, "overloaded_error", "Overloaded"),
            a_wire.error(529, "overloaded_error", "Overloaded"),
            a_wire.reply_text("Here it is."),
        )
        chat = bound_chat(app)
        sent = httpx.post(
            f"{app.base}/api/conversations/{chat}/messages", json={"text": "不对，应该按月汇总"}, headers=headers
        )
        assert sent.status_code == 202
        first = signals(data, 1)[0]
        assert first["agent"] == "analyst" and first["conversation"] == chat and first["outcome"] == "done"
        assert "You are analyst." in json.dumps(anthropic_server.requests[0].json["system"])
        assert first["correction"][0] == "zh" and first["tool_calls"] == 1
        assert [(e["tool"], e["transient"]) for e in first["errors"]] == [("read_file", False)]
        assert "skill-creator" in first["skills_advertised"]
        httpx.post(
            f"{app.base}/api/conversations/{chat}/messages", json={"text": "thanks, now for 2025"}, headers=headers
        )
        second = signals(data, 2)[1]
        assert second["retries"] == 2 and second["errors"] == [] and second["correction"] is None
        runs = [RunSignals.from_json(line) for line in signals(data, 2)]
        assert score_runs(runs[1:]).score == 0 and score_runs(runs).fires  # the 529s teach nothing
    finally:
        app.stop()


def test_orkas_run_counts_its_run_and_carries_what_reflection_taught(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    from tests.e2e.test_cli import anthropic_env, orkas

    env = {**anthropic_env(anthropic_server), "ORKAS_HOME": str(tmp_path / "data"), "HOME": str(tmp_path)}
    learning_on(tmp_path / "data")
    memo = tmp_path / "data" / "learned" / "analyst" / "memo"
    memo.mkdir(parents=True)
    (memo / "STRATEGIES.md").write_text("- WHEN totals are asked for THEN group them by month.\n")
    anthropic_server.script(a_wire.reply_text("Grouped by month."))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    said = "Não está certo, refaça por mês"
    ran = orkas("run", said, "--workspace", str(workspace), "--agent", "analyst", env=env, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "WHEN totals are asked for THEN group them by month." in json.dumps(
        anthropic_server.requests[0].json["system"]
    )
    [line] = signals(tmp_path / "data", 1)
    assert line["agent"] == "analyst" and line["correction"][0] == "pt" and line["outcome"] == "done"


def test_a_week_in_the_terminal_learns_from_a_correction_and_not_from_529s(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    from tests.e2e.test_cli import anthropic_env, orkas

    env = {**anthropic_env(anthropic_server), "ORKAS_HOME": str(tmp_path / "data"), "HOME": str(tmp_path)}
    learning_on(tmp_path / "data")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    as_analyst = ["--workspace", str(workspace), "--agent", "analyst"]
    anthropic_server.script(
        a_wire.error(529, "overloaded_error", "Overloaded"),
        a_wire.reply_text("Here are the totals."),
    )
    assert orkas("run", "Sum the invoices", *as_analyst, env=env, cwd=tmp_path).returncode == 0
    calls = len(anthropic_server.requests)
    quiet = orkas("evolve", "run", env=env, cwd=tmp_path)
    assert quiet.returncode == 0 and "analyst: skipped: trigger 0.00" in quiet.stdout
    assert "commander" not in quiet.stdout  # Orkas itself never evolves
    assert len(anthropic_server.requests) == calls  # no reflection call for a provider's bad minute

    anthropic_server.script(a_wire.reply_text("Done, by month."))
    said = "Não está certo: eu disse que os totais são por mês"
    assert orkas("run", said, *as_analyst, env=env, cwd=tmp_path).returncode == 0
    status = json.loads(orkas("evolve", "status", "--json", env=env, cwd=tmp_path).stdout)
    analyst = next(row for row in status if row["agent"] == "analyst")
    assert analyst["dirty"] and analyst["trigger"]["fires"] and "user_correction" in analyst["trigger"]["why"][0]
    anthropic_server.script(
        a_wire.message(
            a_wire.tool_use(
                "memo_write", {"part": "strategies", "text": "- QUANDO pedirem totais ENTÃO agrupe por mês."}, id="m1"
            )
        ),
        a_wire.reply_text("Salvo."),
    )
    reflected = orkas("evolve", "run", env=env, cwd=tmp_path)
    assert reflected.returncode == 0 and "analyst: reflected" in reflected.stdout
    assert "memo strategies" in reflected.stdout
    reflection = anthropic_server.requests[-2].json
    assert [t["name"] for t in reflection["tools"]] == ["skill_manage", "memo_write"]
    assert reflection["model"] == "claude-haiku-4-5"  # the provider's small model
    assert "Não está certo" in json.dumps(reflection["messages"], ensure_ascii=False)
    if "proposed memo strategies" in reflected.stdout:  # the full guard held it: the person accepts it
        row = json.loads(orkas("evolve", "status", "--json", env=env, cwd=tmp_path).stdout)[0]
        evolution_for = __import__("orkas.app", fromlist=["evolution_for"]).evolution_for
        settings = __import__("orkas.app", fromlist=["settings_from_env"]).settings_from_env(env)
        evolution_for(settings).decide("analyst", row["proposals"][0]["id"], accept=True)
    anthropic_server.script(a_wire.reply_text("Por mês."))
    assert orkas("run", "E os de março?", *as_analyst, env=env, cwd=tmp_path).returncode == 0
    assert "agrupe por mês" in json.dumps(anthropic_server.requests[-1].json["system"], ensure_ascii=False)
    again = orkas("evolve", "run", env=env, cwd=tmp_path)
    assert "skipped" in again.stdout  # one quiet run since: below the trigger


def test_a_denied_approval_is_a_skip_and_another_answer_is_counted(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    from websockets.sync.client import connect

    data = tmp_path / "data"
    learning_on(data)
    app = start_app(data, HOME=str(tmp_path), ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    headers = {"X-Orkas-Token": app.token}
    try:
        anthropic_server.script(
            a_wire.message(a_wire.tool_use("bash", {"command": "rm -rf build"}, id="t1")),
            a_wire.reply_text("Left it."),
            a_wire.reply_text("Another answer."),
        )
        chat = bound_chat(app)
        url = app.base.replace("http://", "ws://") + f"/api/events?conversation={chat}&token={app.token}"
        with connect(url) as socket:
            httpx.post(f"{app.base}/api/conversations/{chat}/messages", json={"text": "clean up"}, headers=headers)
            while True:
                event = json.loads(socket.recv(timeout=20))
                if event["type"] == "permission_request":
                    body = {"question_id": event["id"], "decision": "deny"}
                    httpx.post(f"{app.base}/api/conversations/{chat}/answers", json=body, headers=headers)
                if event["type"] == "idle":
                    break
        first = signals(data, 1)[0]
        assert first["skips"] == 1 and first["outcome"] == "done"
        history = httpx.get(f"{app.base}/api/conversations/{chat}/messages", headers=headers).json()
        person = next(m for m in history["messages"] if m["role"] == "user")
        again = httpx.post(
            f"{app.base}/api/conversations/{chat}/messages/{person['id']}/regenerate", headers=headers, json={}
        )
        assert again.status_code == 202, again.text
        lines = signals(data, 3)
        assert any(line["another_answer"] == 1 and line["outcome"] == "between" for line in lines)
    finally:
        app.stop()


def test_the_app_reflects_in_the_background_unless_learning_is_off(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    for learning in (False, True):
        data = tmp_path / f"data-{learning}"
        learning_on(data)
        preferences = {"auto_title": False, "learning": learning}
        (data / "settings.json").write_text(json.dumps({"preferences": preferences}))
        from orkas.adapter.learning.signals import SignalLog

        SignalLog(data / "signals").record(RunSignals(agent="analyst", conversation="c1", correction=("en", "wrong")))
        if learning:
            anthropic_server.script(a_wire.reply_text("nothing to save"))
        before = len(anthropic_server.requests)
        app = start_app(data, HOME=str(tmp_path), ANTHROPIC_API_KEY="sk-ant-test",
                        ANTHROPIC_BASE_URL=anthropic_server.url, ORKAS_EVOLVE_SETTLE="1")  # fmt: skip
        try:
            state = data / "learned" / "state.json"
            deadline = time.monotonic() + (15 if learning else 4)
            while time.monotonic() < deadline and not state.exists():
                time.sleep(0.1)
            if learning:
                assert json.loads(state.read_text())["analyst"]["last"] > 0
                assert "Transient errors" in json.dumps(anthropic_server.requests[before].json["system"])
            else:
                assert not state.exists() and len(anthropic_server.requests) == before
        finally:
            app.stop()


def test_an_ordinary_chat_is_never_counted_even_with_learning_on(anthropic_server: FakeServer, tmp_path: Path) -> None:
    data = tmp_path / "data"
    learning_on(data)
    app = start_app(data, HOME=str(tmp_path), ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    headers = {"X-Orkas-Token": app.token}
    try:
        anthropic_server.script(a_wire.reply_text("ok"), a_wire.reply_text("ok"))
        plain = httpx.post(f"{app.base}/api/conversations", json={}, headers=headers).json()["id"]
        httpx.post(f"{app.base}/api/conversations/{plain}/messages", json={"text": "不对"}, headers=headers)
        deadline = time.monotonic() + 20
        while httpx.get(f"{app.base}/api/conversations/{plain}/messages", headers=headers).json()["running"]:
            assert time.monotonic() < deadline, "the plain chat's turn never ended"
            time.sleep(0.05)
        chat = bound_chat(app)  # its turn starts after the plain chat's ended (and would have been counted)
        httpx.post(f"{app.base}/api/conversations/{chat}/messages", json={"text": "wrong"}, headers=headers)
        lines = signals(data, 1)
        assert [line["agent"] for line in lines] == ["analyst"] and lines[0]["conversation"] == chat
    finally:
        app.stop()

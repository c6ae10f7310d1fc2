"""Self-evolution's signals from a running `orkas serve` with default settings: every run of the commander is
counted into `<data>/signals/YYYY-MM-DD.jsonl` — a correction in Chinese and a real tool error noticed, a
provider that kept answering 529 counted as retries, never as the agent's error."""

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


def test_each_run_is_counted_on_the_machine(anthropic_server: FakeServer, tmp_path: Path) -> None:
    home = tmp_path / "person"
    home.mkdir()
    data = tmp_path / "data"
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
        chat = httpx.post(f"{app.base}/api/conversations", json={}, headers=headers).json()["id"]
        sent = httpx.post(
            f"{app.base}/api/conversations/{chat}/messages", json={"text": "不对，应该按月汇总"}, headers=headers
        )
        assert sent.status_code == 202
        first = signals(data, 1)[0]
        assert first["agent"] == "commander" and first["conversation"] == chat and first["outcome"] == "done"
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
    memo = tmp_path / "data" / "learned" / "commander" / "memo"
    memo.mkdir(parents=True)
    (memo / "STRATEGIES.md").write_text("- WHEN totals are asked for THEN group them by month.\n")
    anthropic_server.script(a_wire.reply_text("Grouped by month."))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    ran = orkas("run", "Não está certo, refaça por mês", "--workspace", str(workspace), env=env, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "WHEN totals are asked for THEN group them by month." in json.dumps(
        anthropic_server.requests[0].json["system"]
    )
    [line] = signals(tmp_path / "data", 1)
    assert line["agent"] == "commander" and line["correction"][0] == "pt" and line["outcome"] == "done"


def test_a_week_in_the_terminal_learns_from_a_correction_and_not_from_529s(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    from tests.e2e.test_cli import anthropic_env, orkas

    env = {**anthropic_env(anthropic_server), "ORKAS_HOME": str(tmp_path / "data"), "HOME": str(tmp_path)}
    workspace = tmp_path / "ws"
    workspace.mkdir()
    anthropic_server.script(
        a_wire.error(529, "overloaded_error", "Overloaded"),
        a_wire.reply_text("Here are the totals."),
    )
    assert orkas("run", "Sum the invoices", "--workspace", str(workspace), env=env, cwd=tmp_path).returncode == 0
    calls = len(anthropic_server.requests)
    quiet = orkas("evolve", "run", env=env, cwd=tmp_path)
    assert quiet.returncode == 0 and "commander: skipped: trigger 0.00" in quiet.stdout
    assert len(anthropic_server.requests) == calls  # no reflection call for a provider's bad minute

    anthropic_server.script(a_wire.reply_text("Done, by month."))
    said = "Não está certo: eu disse que os totais são por mês"
    assert orkas("run", said, "--workspace", str(workspace), env=env, cwd=tmp_path).returncode == 0
    status = json.loads(orkas("evolve", "status", "--json", env=env, cwd=tmp_path).stdout)
    commander = next(row for row in status if row["agent"] == "commander")
    assert commander["dirty"] and commander["trigger"]["fires"] and "user_correction" in commander["trigger"]["why"][0]
    anthropic_server.script(
        a_wire.message(
            a_wire.tool_use(
                "memo_write", {"part": "strategies", "text": "- QUANDO pedirem totais ENTÃO agrupe por mês."}, id="m1"
            )
        ),
        a_wire.reply_text("Salvo."),
    )
    reflected = orkas("evolve", "run", env=env, cwd=tmp_path)
    assert (
        reflected.returncode == 0
        and "commander: reflected" in reflected.stdout
        and "memo strategies" in reflected.stdout
    )
    reflection = anthropic_server.requests[-2].json
    assert [t["name"] for t in reflection["tools"]] == ["skill_manage", "memo_write"]
    assert "Não está certo" in json.dumps(reflection["messages"], ensure_ascii=False)
    anthropic_server.script(a_wire.reply_text("Por mês."))
    assert orkas("run", "E os de março?", "--workspace", str(workspace), env=env, cwd=tmp_path).returncode == 0
    assert "agrupe por mês" in json.dumps(anthropic_server.requests[-1].json["system"], ensure_ascii=False)
    again = orkas("evolve", "run", env=env, cwd=tmp_path)
    assert "skipped" in again.stdout  # one quiet run since: below the trigger


def test_a_denied_approval_is_a_skip_and_another_answer_is_counted(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    from websockets.sync.client import connect

    data = tmp_path / "data"
    app = start_app(data, HOME=str(tmp_path), ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    headers = {"X-Orkas-Token": app.token}
    try:
        anthropic_server.script(
            a_wire.message(a_wire.tool_use("bash", {"command": "rm -rf build"}, id="t1")),
            a_wire.reply_text("Left it."),
            a_wire.reply_text("Another answer."),
        )
        chat = httpx.post(f"{app.base}/api/conversations", json={}, headers=headers).json()["id"]
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
        data.mkdir()
        preferences = {"auto_title": False, "learning": learning}
        (data / "settings.json").write_text(json.dumps({"preferences": preferences}))
        from orkas.adapter.signals import SignalLog

        SignalLog(data / "signals").record(RunSignals(agent="commander", conversation="c1", correction=("en", "wrong")))
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
                assert json.loads(state.read_text())["commander"]["last"] > 0
                assert "Transient errors" in json.dumps(anthropic_server.requests[before].json["system"])
            else:
                assert not state.exists() and len(anthropic_server.requests) == before
        finally:
            app.stop()

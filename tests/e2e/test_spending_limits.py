"""Spending limits set badly, through the real CLI and the real server: every bad amount is refused with a
sentence and nothing set before is lost (a negative limit from `orkas budget` once made settings.json
unreadable — and with it the limits, which runs then ignored). One rule for both: store.set_limits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

from orkas.cli import main
from tests.conftest import subprocess_env
from tests.ui.conftest import ORKAS, start_app

BAD_BODIES = [
    '{"per_day": -1}',
    '{"per_day": NaN}',
    '{"per_day": Infinity}',
    '{"per_day": 1e400}',
    '{"per_day": true}',
    '{"per_day": "five"}',
    '{"per_day": [1]}',
    '{"per_conversation": 2e6}',
    '{"per_month": "1e"}',
]
SET = "per day: $5.00; per month: no limit; per conversation: $0.50"
BAD = ["-1", "-0.01", "nan", "inf", "-inf", "1e308", "1000000.01", "five", ""]


def budget(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = subprocess_env(ORKAS_HOME=str(home))
    return subprocess.run([ORKAS, "budget", *args], env=env, capture_output=True, text=True, timeout=60)


def test_the_cli_refuses_a_bad_amount_and_keeps_what_was_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    assert budget(home, "--day", "5", "--conversation", "0.5").returncode == 0
    # Every bad amount for every limit, through the CLI's own entry point in this process (thirty-nine starts of
    # the program took a minute of the suite); the installed program itself refuses one of each below.
    monkeypatch.setenv("ORKAS_HOME", str(home))
    for flag in ("--day", "--month", "--conversation"):
        for value in BAD:
            assert main(["budget", f"{flag}={value}"]) == 2, (flag, value)
            assert "spending limit" in capsys.readouterr().err, (flag, value)
    for flag, value in (("--day", "-1"), ("--month", "nan"), ("--conversation", "five")):
        refused = budget(home, f"{flag}={value}")
        assert refused.returncode == 2 and "spending limit" in refused.stderr, (flag, value, refused.stderr)
    shown = budget(home)
    assert shown.returncode == 0 and shown.stdout.strip() == SET
    assert budget(home, "--conversation", "0.001").stdout.strip().endswith("per conversation: $0.001")  # not $0.00
    assert budget(home, "--day", "0").stdout.startswith("per day: no limit")


def test_a_file_broken_by_an_older_version_is_repaired_by_setting_the_limit_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"budgets": {"per_day": -1, "per_conversation": 0.5}}))
    broken = budget(home)
    assert broken.returncode == 2 and "spending limit" in broken.stderr  # says which value, not just "ValueError"
    repaired = budget(home, "--day", "5")
    assert repaired.returncode == 0, repaired.stderr
    assert repaired.stdout.strip() == SET  # the valid one kept


def test_the_usage_form_s_route_refuses_the_same_amounts_and_keeps_what_was_set(tmp_path: Path) -> None:
    app = start_app(tmp_path / "home")
    try:
        headers = {"X-Orkas-Token": app.token}

        def put(body: str) -> httpx.Response:
            content = {"Content-Type": "application/json", **headers}
            return httpx.put(f"{app.base}/api/budget", content=body, headers=content, timeout=10)

        assert put('{"per_day": 5, "per_conversation": 0.5}').status_code == 200
        for body in BAD_BODIES:
            answer = put(body)
            assert answer.status_code == 400 and "spending limit" in answer.json()["detail"], (body, answer.text)
            assert answer.json()["limit"] == next(iter(json.loads(body)))  # the form marks that field
        assert put('{"per_week": 3}').status_code == 422  # no such limit
        kept = put("{}").json() | {"spent_today": 0, "spent_month": 0}
        assert kept == {
            "per_day": 5,
            "per_month": None,
            "per_conversation": 0.5,
            "spent_today": 0,
            "spent_today_at_least": False,
            "spent_month": 0,
            "spent_month_at_least": False,
            "reached": {},  # nothing spent yet
            "chats_over": [],
        }
        assert put('{"per_day": null}').json()["per_conversation"] == 0.5  # one turned off, the other kept
        assert budget(app.home, "--day", "7").stdout.strip() == SET.replace("$5.00", "$7.00")
        got = httpx.get(f"{app.base}/api/budget", headers=headers, timeout=10).json()
        assert (got["per_day"], got["per_conversation"]) == (7, 0.5)  # the CLI's and the form's are the same
    finally:
        app.stop()

"""The data folder's format: a folder written by 0.1.0 opens in this version with everything in it (its
vault still unlocks), a new one is stamped, steps run once each and resume after a crash, and a folder
from a newer Orkas is refused with one line and left exactly as it was."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from orkas import __version__
from orkas.adapter.settings.data_format import CURRENT, MARKER, DataTooNew, prepare
from tests.conftest import subprocess_env
from tests.fakes import anthropic
from tests.fakes.server import FakeServer
from tests.ui.conftest import ORKAS

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "data-0.1.0.tar.gz"  # make_data_0_1_0.py


def orkas(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ORKAS, *args], env=subprocess_env(ORKAS_HOME=str(home)), capture_output=True, text=True, timeout=120
    )


def old_folder(tmp_path: Path) -> Path:
    with tarfile.open(FIXTURE) as archive:
        archive.extractall(tmp_path, filter="data")
    return tmp_path / "home"


def test_a_folder_written_by_0_1_0_opens_with_everything_in_it(tmp_path: Path, anthropic_server: FakeServer) -> None:
    home = old_folder(tmp_path)
    assert not (home / MARKER).exists()
    settings = json.loads((home / "settings.json").read_text())
    settings["providers"]["anthropic"]["base_url"] = anthropic_server.url  # that day's fake server is gone
    (home / "settings.json").write_text(json.dumps(settings))

    found = orkas(home, "kb", "search", "zebrafish")
    assert found.returncode == 0, found.stderr
    assert "cleaned on Tuesdays" in found.stdout
    assert json.loads((home / MARKER).read_text()) == {"format": CURRENT, "written_by": __version__}
    agents = orkas(home, "agents", "list")
    assert "reviewer" in agents.stdout
    anthropic_server.script(anthropic.reply_text("Still Friday."))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    ran = orkas(home, "run", "When is the launch?", "--workspace", str(workspace))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "Still Friday."
    sent = anthropic_server.requests[0].headers  # the key from 0.1.0's vault
    assert "sk-ant-fixture-0-1-0" in (sent.get("x-api-key", ""), sent.get("authorization", "").removeprefix("Bearer "))


def test_a_folder_from_a_newer_orkas_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    home = old_folder(tmp_path)
    (home / MARKER).write_text(json.dumps({"format": CURRENT + 1, "written_by": "9.0.0"}))
    before = {p: p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}
    result = orkas(home, "status")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "written by Orkas 9.0.0" in result.stderr
    assert "install that version or newer" in result.stderr
    after = {p: p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file() and "logs" not in p.parts}
    assert after == {p: b for p, b in before.items() if "logs" not in p.parts}


def test_a_new_folder_is_stamped_current(tmp_path: Path) -> None:
    assert prepare(tmp_path) == prepare(tmp_path).__class__(was=0, now=CURRENT, steps=0)
    assert json.loads((tmp_path / MARKER).read_text())["format"] == CURRENT


def test_steps_run_once_in_order_and_a_crash_resumes_at_the_step_that_failed(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()  # an existing folder without a marker: format 1
    done: list[str] = []
    crash = [True]

    def one_to_two(folder: Path) -> None:
        done.append("1→2")

    def two_to_three(folder: Path) -> None:
        if crash.pop() if crash else False:
            raise OSError("disk full")
        done.append("2→3")

    with pytest.raises(OSError):
        prepare(tmp_path, (one_to_two, two_to_three))
    assert json.loads((tmp_path / MARKER).read_text())["format"] == 2 and done == ["1→2"]
    result = prepare(tmp_path, (one_to_two, two_to_three))
    assert (result.was, result.now, result.steps) == (2, 3, 1) and done == ["1→2", "2→3"]
    assert prepare(tmp_path, (one_to_two, two_to_three)).steps == 0


def test_an_unreadable_marker_is_reported_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / MARKER).write_text("{not json")
    with pytest.raises(DataTooNew, match="move it aside"):
        prepare(tmp_path)
    assert (tmp_path / MARKER).read_text() == "{not json"


def test_the_kept_homes_of_commands_go_without_following_what_was_planted_in_them(tmp_path: Path) -> None:
    home = old_folder(tmp_path)
    kept = home / "sandbox-homes" / "0123456789abcdef"
    (kept / ".local" / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (kept / ".local" / "lib" / "python3.11" / "site-packages" / "evil.pth").write_text("import os\n")
    victim = tmp_path / "bashrc"
    victim.write_text("the person's bashrc\n")
    (kept / ".gitconfig").symlink_to(victim)
    (kept / "everything").symlink_to(tmp_path, target_is_directory=True)
    prepare(home)
    assert not (home / "sandbox-homes").exists()
    assert victim.read_text() == "the person's bashrc\n" and (tmp_path / "bashrc").exists()
    assert json.loads((home / MARKER).read_text())["format"] == CURRENT

"""The real desktop window under Xvfb: `orkas` opens it, it paints, the page↔Python bridge answers,
and a real XDND drag from another application delivers the dropped file's full path, which is
attached to a conversation. Each window runs in its own process (Qt does not survive two in one)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import subprocess_env
from tests.display import start_xvfb, stop_group

ORKAS = str(Path(sys.executable).parent / "orkas")
SOURCE = str(Path(__file__).with_name("drag_source.py"))
CONVERT = "/usr/bin/convert"  # ImageMagick's, not a stand-in earlier on PATH


def need(*tools: str) -> None:
    missing = [t for t in tools if not (shutil.which(t) or Path(t).exists())]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run scripts/setup.sh (it installs them)")


@pytest.fixture
def display() -> Iterator[str]:
    need("Xvfb", "xdotool", "xwd", CONVERT)
    xvfb, number = start_xvfb()
    yield number
    xvfb.terminate()
    xvfb.wait(10)


def start(command: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def wait_for(report: Path, event: str, timeout: float = 40) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if report.exists():
            for line in report.read_text().splitlines():
                record = json.loads(line)
                if record["event"] == event:
                    return record
        time.sleep(0.1)
    raise AssertionError(
        f"no {event!r} from the window within {timeout} s; report: {report.read_text() if report.exists() else 'none'}"
    )


def screenshot(display: str, target: Path) -> float:
    """Save the screen as PNG; returns the standard deviation of its pixels (0 = one flat colour)."""
    xwd = subprocess.run(["xwd", "-root", "-display", display], capture_output=True, check=True).stdout
    subprocess.run([CONVERT, "xwd:-", str(target)], input=xwd, check=True)
    spread = subprocess.run(
        [CONVERT, str(target), "-format", "%[fx:standard_deviation]", "info:"],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(spread.stdout)


def drag(display: str, start_at: tuple[int, int], end_at: tuple[int, int]) -> None:
    def xdotool(*args: str) -> None:
        subprocess.run(["xdotool", *args], env={**os.environ, "DISPLAY": display}, check=True)

    xdotool("mousemove", str(start_at[0]), str(start_at[1]))
    time.sleep(0.3)
    xdotool("mousedown", "1")
    steps = 8
    for i in range(1, steps + 1):  # XDND needs motion over the target, not a jump
        x = start_at[0] + (end_at[0] - start_at[0]) * i // steps
        y = start_at[1] + (end_at[1] - start_at[1]) * i // steps
        xdotool("mousemove", str(x), str(y))
        time.sleep(0.15)
    time.sleep(0.3)
    xdotool("mouseup", "1")


def test_the_window_opens_answers_and_receives_a_real_drop(display: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = subprocess_env(
        DISPLAY=display,
        HOME=str(home),  # Qt and Chromium write caches and profiles here
        XDG_RUNTIME_DIR=str(tmp_path),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        ORKAS_HOME=str(tmp_path / "data"),
        ORKAS_DESKTOP_REPORT=str(tmp_path / "report.jsonl"),
    )
    dropped = tmp_path / "outside" / "field notes.txt"
    dropped.parent.mkdir()
    dropped.write_text("the lighthouse keeper counts 42 ships\n")
    source = start([sys.executable, SOURCE, str(dropped)], env)
    window = start([ORKAS], env)
    try:
        assert source.stdout is not None and source.stdout.readline().strip() == "ready"
        shown = wait_for(tmp_path / "report.jsonl", "shown")
        assert shown["ping"]["ok"] is True  # page → Python → page
        deadline = time.monotonic() + 15  # the first paint of the app shell, however long it takes
        while (spread := screenshot(display, tmp_path / "window.png")) <= 0.05 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert spread > 0.05, f"the screen looks blank (pixel spread {spread:.3f})"

        drag(display, (100, 50), (1000, 500))  # from the source window into the middle of the app
        attached = wait_for(tmp_path / "report.jsonl", "attached")
        assert attached["paths"] == [str(dropped)]  # the real, full path
        [record] = attached["results"]
        assert record["name"] == "field notes.txt" and record["in_place"] is False
        copy = Path(record["path"])
        assert copy.read_text() == dropped.read_text()
        assert str(tmp_path / "data" / "attachments" / attached["conversation"]) in str(copy)
    finally:
        stop_group(window)
        stop_group(source)
    assert window.returncode is not None
    logged = "".join(p.read_text() for p in (tmp_path / "data" / "logs").glob("*.log"))
    assert "[window " in logged and "window shown after" in logged and "server ready on port" in logged


def test_a_missing_system_library_is_one_line_naming_what_to_install(display: str, tmp_path: Path) -> None:
    """Qt's own answer is an abort and a page about platform plugins; ours is one line."""
    need("bwrap")
    library = Path("/usr/lib/x86_64-linux-gnu/libxcb-cursor.so.0").resolve()
    assert library.exists(), "scripts/setup.sh installs libxcb-cursor0"
    env = subprocess_env(DISPLAY=display, HOME=str(tmp_path), ORKAS_HOME=str(tmp_path / "data"))
    hidden = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", "/dev/null", str(library)]  # present, unloadable
    result = subprocess.run([*hidden, ORKAS], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "libxcb-cursor.so.0" in result.stderr and "sudo apt install libxcb-cursor0" in result.stderr

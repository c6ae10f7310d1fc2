"""The log folder: one file per day, parts past the size cap, pruning by age and total size, several
processes appending to the same file, and the redaction filter in front of every handler."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orkas.core.logging import (
    PREFIX,
    DailyFileHandler,
    RedactionFilter,
    choose_level,
    prune,
    reset_for_tests,
    setup_logging,
)

WRITER = """
import logging, sys
from pathlib import Path
from orkas.core.logging import DailyFileHandler
handler = DailyFileHandler(Path(sys.argv[1]), file_bytes=int(sys.argv[3]))
handler.setFormatter(logging.Formatter("%(message)s"))
log = logging.getLogger("writer")
log.addHandler(handler)
log.setLevel(logging.INFO)
for i in range(int(sys.argv[4])):
    log.info("%s line %05d %s", sys.argv[2], i, "x" * 60)
"""


@pytest.fixture
def clean_logging() -> Iterator[None]:
    yield
    reset_for_tests()


def lines_in(folder: Path) -> list[str]:
    return [line for path in sorted(folder.glob(f"{PREFIX}*.log")) for line in path.read_text().splitlines()]


def test_two_processes_share_the_file_and_its_parts_without_losing_or_mixing_a_line(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    count = 3000
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(folder), name, str(40_000), str(count)])
        for name in ("alpha", "beta")
    ]
    for writer in writers:
        assert writer.wait(timeout=120) == 0
    lines = lines_in(folder)
    for name in ("alpha", "beta"):
        mine = sorted(line for line in lines if line.startswith(f"{name} line "))
        assert mine == [f"{name} line {i:05d} {'x' * 60}" for i in range(count)]
    assert len(lines) == 2 * count  # nothing torn, nothing doubled
    parts = sorted(folder.glob(f"{PREFIX}*.log"))
    assert len(parts) > 5  # ~250 KB over 40 KB parts
    assert all(p.stat().st_size <= 40_000 + 200 for p in parts)  # one line past the cap at most


def test_old_files_go_and_the_folder_stays_under_its_total(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    week_ago = time.time() - 8 * 86400
    old = folder / f"{PREFIX}2026-11-20.log"
    old.write_text("old\n")
    os.utime(old, (week_ago, week_ago))
    for day in range(21, 30):
        path = folder / f"{PREFIX}2026-11-{day}.log"
        path.write_bytes(b"y" * 1000)
        stamp = time.time() - (30 - day) * 3600
        os.utime(path, (stamp, stamp))
    prune(folder, total_bytes=4500)
    left = sorted(p.name for p in folder.glob(f"{PREFIX}*.log"))
    assert left == [f"{PREFIX}2026-11-{day}.log" for day in (26, 27, 28, 29)]  # the newest, within 4500 bytes


def test_the_filter_redacts_message_arguments_and_tracebacks(tmp_path: Path) -> None:
    handler = DailyFileHandler(tmp_path)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    handler.addFilter(RedactionFilter("test"))
    log = logging.getLogger("filter-test")
    log.addHandler(handler)
    try:
        log.warning("calling with %s", "Authorization: Bearer sk-ant-abcdefghijklmnop")
        try:
            raise ValueError("the key sk-proj-ZYXWVUTSRQPONMLKJIHG was refused")
        except ValueError:
            log.exception("provider failed for bob@example.com")
        log.warning("bad %d format", "not a number")  # a bug in a log call loses nothing else
        log.warning("provider said: %s", "oops\n2026-01-01 00:00:00.000 CRITICAL forged record")
    finally:
        log.removeHandler(handler)
        handler.close()
    text = "\n".join(lines_in(tmp_path))
    assert "sk-ant-abcdefghijklmnop" not in text and "ZYXWVUTSRQPONMLKJIHG" not in text
    assert "bob@example.com" not in text
    assert "Traceback" in text and "ValueError" in text
    assert "unformattable" in text
    assert not any(line.startswith("2026-01-01") for line in text.splitlines())  # no forged record


def test_setup_sends_warnings_to_the_terminal_and_everything_to_the_file(tmp_path: Path, clean_logging: None) -> None:
    terminal = io.StringIO()
    setup = setup_logging(tmp_path, process="test", env={}, setting="debug", terminal=terminal, home=tmp_path)
    logging.getLogger("orkas.test").debug("details at %s", tmp_path / "notes.txt")
    logging.getLogger("orkas.test").warning("a warning with sk-ant-zzzzzzzzzzzzzzzz")
    assert "details at ~/notes.txt" in lines_in(setup.folder)[0]
    assert "a warning" in terminal.getvalue() and "details" not in terminal.getvalue()
    assert "zzzzzzzz" not in terminal.getvalue() + "\n".join(lines_in(setup.folder))


def test_level_comes_from_the_environment_then_the_setting() -> None:
    assert choose_level({}, None) == logging.INFO
    assert choose_level({}, "debug") == logging.DEBUG
    assert choose_level({"ORKAS_LOG_LEVEL": "error"}, "debug") == logging.ERROR
    assert choose_level({"ORKAS_LOG_LEVEL": "loud"}, "warning") == logging.WARNING  # nonsense is ignored

"""Crash reports: unhandled exceptions of a real process (main thread and others) are kept on the
machine, redacted, and shown once; a damaged report or a full folder loses nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from orkas.core.crashes import KEEP, CrashReports

CRASHING = """
import sys, threading
from pathlib import Path
from orkas.core.crashes import CrashReports, install_crash_hooks
from orkas.core.logging import setup_logging
data = Path(sys.argv[1])
setup_logging(data, process="crash-test", env={}, home=data.parent)
install_crash_hooks(CrashReports(data / "crashes", process="crash-test"))
def fail_in_a_thread():
    raise KeyError("sk-ant-threadkey-123456789")
worker = threading.Thread(target=fail_in_a_thread)
worker.start()
worker.join()
raise RuntimeError("could not reach bob@example.com with Bearer abcdef123456 at " + str(data / "x"))
"""


def test_a_real_process_keeps_redacted_reports_of_its_unhandled_exceptions(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ran = subprocess.run([sys.executable, "-c", CRASHING, str(data)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 1 and "RuntimeError" in ran.stderr  # the default hook still prints it
    reports = CrashReports(data / "crashes").all()
    assert sorted(r.source for r in reports) == ["python", "thread"]
    text = json.dumps([r.public() for r in reports])
    assert "KeyError" in text and "RuntimeError" in text and "Traceback" in text
    assert "sk-ant-threadkey" not in text and "bob@example.com" not in text and "abcdef123456" not in text
    assert str(tmp_path) not in text and "~/data/x" in text  # the home folder written as ~
    logged = "".join(p.read_text() for p in (data / "logs").glob("*.log"))
    assert "CRITICAL" in logged and "unhandled python exception" in logged and "sk-ant-threadkey" not in logged


def test_reports_are_shown_once_and_old_ones_go(tmp_path: Path) -> None:
    reports = CrashReports(tmp_path / "crashes")
    first = reports.record("page", "TypeError: x is undefined", "at main.js:1:2")
    assert [c.id for c in reports.unseen()] == [first.id]
    reports.mark_seen()
    assert reports.unseen() == []
    second = reports.record("server", "ValueError: nope")
    assert [c.id for c in reports.unseen()] == [second.id]
    (tmp_path / "crashes" / "00000000-damaged.json").write_text("{not json")
    assert len(reports.all()) == 2  # a damaged report is skipped, not fatal
    for i in range(KEEP + 5):
        reports.record("page", f"Error {i}")
    assert len(reports.files()) <= KEEP


def test_a_huge_stack_is_cut_to_its_end(tmp_path: Path) -> None:
    reports = CrashReports(tmp_path / "crashes")
    crash = reports.record("page", "RangeError", "frame\n" * 100_000 + "the last frame")
    assert len(crash.details) <= 32 * 1024 and crash.details.endswith("the last frame")

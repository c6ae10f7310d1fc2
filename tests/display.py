"""What the window and browser tests, the desktop benchmark and the screenshot script share: a private
X display, stopping a process with all its children, and the flags Debian's chromium needs here."""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Any

# Without the background-networking flags chromium keeps dialling out (refused here); --no-sandbox
# because tests run as root.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def start_xvfb(size: str = "1920x1080x24") -> tuple[subprocess.Popen[bytes], str]:
    """A private Xvfb on a free display number (Xvfb picks it and writes it back): (process, ":N")."""
    read, write = os.pipe()
    process = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", size, "-nolisten", "tcp"],
        pass_fds=(write,),
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        return process, f":{pipe.readline().strip()}"


def stop_group(process: subprocess.Popen[Any]) -> None:
    """Stop a process started with `start_new_session=True` and its whole group (QtWebEngine's and
    chromium's helper processes go with it): TERM, then KILL if it lingers."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(10)

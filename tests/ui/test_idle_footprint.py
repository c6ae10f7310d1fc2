"""What the app holds once its page has started, in the default configuration with nothing stored yet: the
window's idle memory is the sum of what its server loaded (bench/idle_memory.py measures it). Each package
below costs megabytes and loads on first use only — FastAPI not at all (server/routing.py); uvicorn's command
line (click) never; the phone view's Flet and its client's httpx with the mirror; the OS keyring and
`cryptography` when a key is stored or Settings is opened; numpy and faiss with the knowledge base.

A real `orkas serve` in a fresh interpreter, its real page loaded in Chromium; a probe around the entry point
writes the loaded modules when the test sends SIGUSR1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import subprocess_env

PROBE = r"""
import json, signal, sys
out = sys.argv[1]
signal.signal(signal.SIGUSR1, lambda *_: open(out, "w").write(json.dumps(sorted(sys.modules))))
from orkas.cli import main
sys.exit(main(["serve"]))
"""
NOT_AT_IDLE = ("fastapi", "flet", "httpx", "keyring", "cryptography", "numpy", "faiss", "anthropic", "mcp", "click")


def loaded(process: subprocess.Popen[str], out: Path) -> set[str]:
    out.unlink(missing_ok=True)
    process.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 20
    while not out.exists() or not out.read_text():
        assert time.monotonic() < deadline, "the probe never wrote the modules"
        time.sleep(0.05)
    return set(json.loads(out.read_text()))


def test_a_started_page_loads_no_fastapi_phone_view_keyring_or_knowledge_base(browser: Any, tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "modules.json"
    process = subprocess.Popen(
        [sys.executable, "-c", PROBE, str(out)],
        env=subprocess_env(ORKAS_HOME=str(home)),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        context = browser.new_context(viewport={"width": 1200, "height": 800})
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("body[data-ready=true]")
        page.wait_for_load_state("networkidle")  # every request the page makes at start has been answered
        modules = loaded(process, out)
        assert "orkas.server.routing" in modules  # the probe sees the server's modules
        assert [name for name in NOT_AT_IDLE if name in modules] == []

        # Settings opened: where the vault's key is, shown — that is when the keyring is asked.
        page.get_by_role("button", name="Settings", exact=True).click()
        page.wait_for_selector("dialog#settings[open]")
        page.wait_for_load_state("networkidle")
        assert "keyring" in loaded(process, out)
        context.close()
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()

"""Journeys a person walks in the desktop page, end to end in a real browser against a real `orkas serve`
(issue 35). No test waits a fixed time for the app."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.conftest import subprocess_env
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import ORKAS, free_port, start_app

TIMEOUT = 20_000


def test_a_tab_open_when_orkas_restarts_says_so_instead_of_reconnecting_forever(
    browser: Any, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    port, home = free_port(), tmp_path / "home"
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": anthropic_server.url}
    app = start_app(home, port=port, **env)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        httpx.post(f"{app.base}/api/conversations", json={"title": "Garden"}, headers={"X-Orkas-Token": app.token})
        page = context.new_page()
        page.goto(app.url)
        page.wait_for_selector("body[data-ready=true]")
        page.get_by_role("button", name="Garden").click()
        app.stop()
        expect(page.locator("#offline")).to_have_text("Connection lost — reconnecting…", timeout=TIMEOUT)
        app = start_app(home, port=port, **env)  # the same address, a new launch's token
        banner = page.locator("#offline")
        expect(banner).to_contain_text("Orkas was restarted", timeout=TIMEOUT)
        expect(banner).to_contain_text("orkas serve")
        page.get_by_role("button", name="Garden").click()  # what the person tries next: still said, no "reconnecting"
        expect(banner).to_contain_text("Orkas was restarted")
        fresh = context.new_page()  # and the new link works
        fresh.goto(app.url)
        fresh.wait_for_selector("body[data-ready=true]")
        expect(fresh.get_by_role("button", name="Garden")).to_be_visible()
        expect(fresh.locator("#offline")).to_be_hidden()
    finally:
        context.close()
        app.stop()


def test_a_chat_a_terminal_starts_appears_in_the_open_window_without_a_reload(
    browser: Any, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": anthropic_server.url}
    app = start_app(home, **env)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(app.url)
        page.wait_for_selector("body[data-ready=true]")
        anthropic_server.script(a_wire.reply_text("Hello from the terminal."))
        (tmp_path / "ws").mkdir()
        ran = subprocess.run(
            [ORKAS, "run", "say hello", "--model", "anthropic/claude-test"],
            env=subprocess_env(ORKAS_HOME=str(home), **env), capture_output=True, text=True, timeout=60,
            stdin=subprocess.DEVNULL, cwd=tmp_path / "ws",
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        [chat] = httpx.get(f"{app.base}/api/conversations", headers={"X-Orkas-Token": app.token}).json()
        entry = page.locator(f'#chats li.chat[data-id="{chat["id"]}"]')
        expect(entry).to_be_visible(timeout=TIMEOUT)
        entry.get_by_role("button", name=chat["title"] or "Untitled chat").click()
        expect(page.locator("#messages")).to_contain_text("Hello from the terminal.", timeout=TIMEOUT)
    finally:
        context.close()
        app.stop()

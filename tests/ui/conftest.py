"""Browser tests: Debian's chromium driven by Playwright against a real `orkas serve` subprocess that
talks to the wire-level fake Anthropic server. Playwright never downloads a browser here."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import subprocess_env
from tests.fakes.server import FakeServer

if TYPE_CHECKING:
    from tests.mirror_helpers import Mirrored

ORKAS = str(Path(sys.executable).parent / "orkas")


class App:
    """A running `orkas serve` and its data folder."""

    def __init__(self, process: subprocess.Popen[str], url: str, home: Path) -> None:
        self.process = process
        self.url = url
        self.home = home
        self.base = url.split("/?", 1)[0]
        self.token = url.split("token=", 1)[1]

    def stop(self) -> str:
        self.process.terminate()
        try:
            _, err = self.process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return err


def start_app(home: Path, *, titles: bool = False, port: int = 0, **env: str) -> App:
    """`titles`: let the app name new chats with a model call (off by default here: each would take a
    scripted reply from the wire fake that the test meant for something else). `port`: 0 for any."""
    if not titles and not (home / "settings.json").exists():
        home.mkdir(parents=True, exist_ok=True)
        (home / "settings.json").write_text(json.dumps({"preferences": {"auto_title": False}}))
    process = subprocess.Popen(
        [ORKAS, "serve", "--port", str(port)],
        env=subprocess_env(ORKAS_HOME=str(home), **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        process.kill()
        pytest.fail(f"orkas serve printed {url!r}; stderr: {process.communicate()[1]}")
    return App(process, url, home)


@pytest.fixture
def app(anthropic_server: FakeServer, tmp_path: Path) -> Iterator[App]:
    running = start_app(tmp_path / "home", ANTHROPIC_API_KEY="sk-ant-test-key", ANTHROPIC_BASE_URL=anthropic_server.url)
    yield running
    running.stop()


@pytest.fixture
def page(browser: object, app: App) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1200, "height": 800})  # type: ignore[attr-defined]
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda e: errors.append(str(e)))
    opened.goto(app.url)
    opened.wait_for_selector("body[data-ready=true]")
    yield opened
    context.close()
    assert not errors, f"the page raised: {errors}"


def answer_dialog(page: object, text: str | None = None) -> None:
    """Answer the app's own dialog (dialogs.js: never a browser prompt): type `text` if given, confirm."""
    dialog = page.locator("dialog.ask[open]")  # type: ignore[attr-defined]
    if text is not None:
        dialog.locator("input").fill(text)
    dialog.locator("button[type=submit]").click()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def mirrored(anthropic_server: FakeServer, tmp_path: Path) -> Iterator[Mirrored]:
    from tests.mirror_helpers import run_mirrored  # it starts the app as this module does (ORKAS)

    with run_mirrored(anthropic_server, tmp_path, port=free_port()) as running:
        yield running

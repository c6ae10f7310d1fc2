"""Exporting the open chat in the real browser: Markdown and the zip, as downloads."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000


def test_the_open_chat_downloads_as_markdown_and_as_a_zip(page: Page, app: App, anthropic_server: FakeServer) -> None:
    anthropic_server.script(wire.reply_text("Packed."))
    page.fill("#composer textarea", "pack my bag")
    page.press("#composer textarea", "Enter")
    expect(page.locator(".msg.assistant .markdown")).to_have_text("Packed.", timeout=TIMEOUT)
    page.locator("#export summary").click()
    with page.expect_download() as markdown:
        page.locator("#export button[data-format=md]").click()
    text = Path(markdown.value.path()).read_text()
    assert markdown.value.suggested_filename == "pack my bag.md"
    assert "**You:**\n\npack my bag" in text and "**Orkas:**\n\nPacked." in text
    page.locator("#export summary").click()
    with page.expect_download() as packed:
        page.locator("#export button[data-format=zip]").click()
    with zipfile.ZipFile(io.BytesIO(Path(packed.value.path()).read_bytes())) as bundle:
        assert {"conversation.json", "conversation.md"} <= set(bundle.namelist())

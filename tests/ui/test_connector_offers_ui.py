"""A connector's prompts and resources in the composer, in the real browser against `orkas serve` with a real SDK
server (tests/fixtures/mcp_server.py --offers): "/" lists its prompts, one with arguments asks for them in a small
form and its text lands in the box; "+" offers Files… and its resources, one attached shows as a chip and the
model reads it as outside data, as it reads any attached file."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer, Recorded, Reply
from tests.ui.conftest import App
from tests.ui.test_chat import send, user_texts

TIMEOUT = 20_000
SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_server.py"


def add_notes_server(app: App) -> None:
    body = {"name": "notes", "command": [sys.executable, str(SERVER), "--offers"], "confirmed": True}
    added = httpx.post(f"{app.base}/api/connectors", json=body, headers={"X-Orkas-Token": app.token}, timeout=30)
    assert added.status_code == 200, added.text


def test_slash_fills_in_a_prompt_and_plus_attaches_a_resource_the_model_reads(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    add_notes_server(app)
    box = page.locator("textarea.input")
    box.fill("/")
    box.dispatch_event("input")
    option = page.locator("#mentions .prompt-option", has_text="/review")
    expect(option).to_be_visible(timeout=TIMEOUT)
    expect(option).to_contain_text("notes")
    box.press("Enter")  # the marked prompt: it has arguments, so a small form asks for them
    dialog = page.locator("dialog.ask[open]")
    expect(dialog).to_contain_text("Review code", timeout=TIMEOUT)
    dialog.get_by_label(re.compile("^code")).fill("x = 1")
    dialog.get_by_role("button", name="Use this prompt").click()
    expect(box).to_have_value("Please review this code for bugs:\nx = 1", timeout=TIMEOUT)  # to read, then send
    box.fill("")

    page.get_by_role("button", name="Attach files").click()
    menu = page.locator(".attach-menu")
    expect(menu.get_by_role("menuitem", name="Files…")).to_be_visible(timeout=TIMEOUT)
    menu.get_by_role("menuitem", name="notes: today").click()
    chip = page.locator(".chips.pending .chip")
    expect(chip).to_contain_text("today.md", timeout=TIMEOUT)
    expect(chip).not_to_have_class(re.compile("uploading"), timeout=TIMEOUT)

    def read_it(request: Recorded) -> Reply:
        line = next(t for t in user_texts(request) if t.startswith("[attached file: today.md"))
        return wire.message(wire.tool_use("read_file", {"path": line.rsplit(" at ", 1)[1].rstrip("]")}, id="t1"))

    def say_it(request: Recorded) -> Reply:
        contents = "\n".join(user_texts(request))
        assert "water the garden" in contents and "<untrusted_data" in contents  # outside data, like a file
        return wire.reply_text("Today: water the garden.")

    anthropic_server.script(read_it, say_it)
    send(page, "what is on for today?")
    expect(page.locator(".msg.user .chip")).to_have_text("today.md", timeout=TIMEOUT)
    expect(page.locator(".msg.assistant .markdown").last).to_have_text("Today: water the garden.", timeout=TIMEOUT)


def test_without_connectors_plus_opens_the_file_picker_and_slash_is_just_text(page: Page, app: App) -> None:
    with page.expect_file_chooser(timeout=TIMEOUT):
        page.get_by_role("button", name="Attach files").click()
    box = page.locator("textarea.input")
    box.fill("/usr/bin is where it lives")
    box.dispatch_event("input")
    expect(page.locator("#mentions")).to_be_hidden()

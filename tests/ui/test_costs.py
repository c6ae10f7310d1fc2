"""Tokens and cost in the real browser: each answer keeps its cost after a reload, and the chat's
header shows the conversation's total from the usage ledger."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000


def test_an_answers_cost_survives_a_reload_and_the_chat_shows_its_total(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(wire.reply_text("First."), wire.reply_text("Second."))
    shown = page.locator("#total")
    total = shown.text_content() or ""
    for text, reply in (("one", "First."), ("two", "Second.")):
        page.fill("#composer textarea", text)
        page.press("#composer textarea", "Enter")
        # The answer itself, then the run's end: a Stop button not shown yet also reads as hidden, and "two"
        # sent while "one" still ran joined its run (one model call, not two).
        expect(page.locator(".msg.assistant .markdown").last).to_have_text(reply, timeout=TIMEOUT)
        expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
        expect(shown).not_to_have_text(total, timeout=TIMEOUT)  # the chat's total counts this answer too
        expect(shown).to_have_text(re.compile(r"^\$0\.\d{4} · \d+ tokens in this chat$"), timeout=TIMEOUT)
        total = shown.text_content() or ""
    footer = page.locator(".msg.assistant .turn-foot").first
    expect(footer).to_contain_text("$", timeout=TIMEOUT)
    live = footer.text_content()
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".msg.assistant .turn-foot").first).to_have_text(live or "", timeout=TIMEOUT)
    expect(page.locator("#total")).to_have_text(total or "", timeout=TIMEOUT)

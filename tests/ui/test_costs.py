"""Tokens and cost in the real browser: each answer keeps its cost after a reload, and the chat's
header shows the conversation's total from the usage ledger."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer, Reply
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
        expect(shown).to_have_text(re.compile(r"^\$0\.\d{4,} · \d+ tokens in this chat$"), timeout=TIMEOUT)
        total = shown.text_content() or ""
    footer = page.locator(".msg.assistant .turn-foot").first
    expect(footer).to_contain_text("$", timeout=TIMEOUT)
    live = footer.text_content()
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".msg.assistant .turn-foot").first).to_have_text(live or "", timeout=TIMEOUT)
    expect(page.locator("#total")).to_have_text(total or "", timeout=TIMEOUT)


def test_a_stopped_answer_says_what_was_spent_as_far_as_known_live_and_after_a_reload(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    # The provider counts the input as it starts (20,000 tokens) and then streams slowly; the person stops it.
    start, ping, opened, first = wire.events([wire.text("Let me think about that at length.")], input_tokens=20_000)[:4]
    anthropic_server.script(Reply(events=[start, ping, opened, first, *[ping] * 600], event_delay=0.05))
    page.fill("#composer textarea", "think slowly")
    page.press("#composer textarea", "Enter")
    expect(page.locator(".msg.assistant .markdown")).to_contain_text("Let", timeout=TIMEOUT)
    page.click("#composer button.stop")
    expect(page.locator(".marker.stopped")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    # 20,000 in at $3/M (claude-sonnet-4-5) and the 1 out counted so far: at least that, the final count never came.
    footer = page.locator(".msg.assistant .turn-foot")
    expect(footer).to_have_text("20000 in tokens · its output not counted · at least $0.0600", timeout=TIMEOUT)
    total = page.locator("#total")
    expect(total).to_have_text("at least $0.0600 · 20001 tokens in this chat", timeout=TIMEOUT)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".msg.assistant .turn-foot")).to_have_text(
        "20000 in tokens · its output not counted · at least $0.0600", timeout=TIMEOUT
    )
    expect(page.locator("#total")).to_have_text("at least $0.0600 · 20001 tokens in this chat", timeout=TIMEOUT)


def test_a_stopped_answer_whose_spend_the_provider_never_said_is_not_shown_as_free(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    # A provider that counts only at the end (as OpenAI-style streams do): stopped, nothing was counted.
    start, ping, opened, first = wire.events([wire.text("Let me think about that at length.")], input_tokens=0)[:4]
    start = start.replace(b'"output_tokens": 1,', b'"output_tokens": 0,')
    anthropic_server.script(Reply(events=[start, ping, opened, first, *[ping] * 600], event_delay=0.05))
    page.fill("#composer textarea", "think slowly")
    page.press("#composer textarea", "Enter")
    expect(page.locator(".msg.assistant .markdown")).to_contain_text("Let", timeout=TIMEOUT)
    page.click("#composer button.stop")
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    footer = page.locator(".msg.assistant .turn-foot")
    expect(footer).to_have_text("Cost not known: the answer ended before the provider counted it", timeout=TIMEOUT)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".msg.assistant .turn-foot")).to_have_text(
        "Cost not known: the answer ended before the provider counted it", timeout=TIMEOUT
    )
    expect(page.locator("#messages")).not_to_contain_text("$0.0000")


def test_a_small_cost_is_never_shown_as_free(page: Page, app: App) -> None:
    figures = page.evaluate(
        """async () => { const { costFigure } = await import('/static/js/chat.js');
          return [0.06, 0.0001, 0.00003, 0.0000001, 0].map(costFigure); }"""
    )
    assert figures == ["0.0600", "0.0001", "0.000030", "0.00000010", "0.0000"]  # ten tokens are not "$0.0000"

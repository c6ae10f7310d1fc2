"""Find in the open chat (Ctrl+F, next and previous, Esc) and Copy on every message, in the real browser."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000


def chat(page: Page, text: str, answer: str) -> None:
    page.fill("#composer textarea", text)
    page.press("#composer textarea", "Enter")
    expect(page.locator(".msg.assistant").last).to_contain_text(answer, timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)


def test_find_walks_the_messages_that_match_and_copy_takes_a_message(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(
        wire.reply_text("Lighthouses guide ships."), wire.reply_text("A **lighthouse** keeper counts ships.")
    )
    chat(page, "tell me about lighthouses", "Lighthouses guide ships.")
    chat(page, "and their keepers", "keeper counts ships")
    expect(page.locator(".msg.assistant")).to_have_count(2, timeout=TIMEOUT)
    page.keyboard.press("Control+f")
    expect(page.locator("#find")).to_be_visible()
    expect(page.locator("#find-input")).to_be_focused()
    page.keyboard.type("LIGHTHOUSE")
    expect(page.locator("#find-count")).to_have_text("1 of 3")
    expect(page.locator(".msg.found")).to_have_count(3)
    page.keyboard.press("Enter")
    expect(page.locator("#find-count")).to_have_text("2 of 3")
    page.locator("#find-previous").click()
    page.locator("#find-previous").click()
    expect(page.locator("#find-count")).to_have_text("3 of 3")  # wraps around
    expect(page.locator(".msg.found-current")).to_contain_text("keeper counts ships")
    page.locator("#find-input").fill("albatross")
    expect(page.locator("#find-count")).to_have_text("Not found")
    page.locator("#find-input").press("Escape")
    expect(page.locator("#find")).to_be_hidden()
    expect(page.locator(".msg.found")).to_have_count(0)

    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    answer = page.locator(".msg.assistant").last
    answer.hover()
    answer.get_by_role("button", name="Copy").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == "A **lighthouse** keeper counts ships."  # the Markdown as written
    expect(answer.locator(".copy-message")).to_have_attribute("data-copied", "true")
    question = page.locator(".msg.user").first
    question.get_by_role("button", name="Copy").click()
    assert page.evaluate("navigator.clipboard.readText()") == "tell me about lighthouses"
    expect(page.locator(".msg.user").first).to_have_text(re.compile(r"^tell me about lighthouses$"))


def test_a_search_result_opens_its_chat_at_the_matching_message(page: Page, app: App) -> None:
    from orkas.adapter.conversations.store import ConversationStore
    from orkas.adapter.conversations.transcript import encode_line
    from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage

    store = ConversationStore(app.home)
    long_chat = store.create(title="Travel notes")
    lines = []
    for n in range(40):
        lines.append(encode_line(UserMessage(content=(TextBlock(text=f"Question {n}"),))))
        words = "Try the pineapple tart in Lisbon." if n == 27 else f"Answer {n}, at some length.\n\n" * 3
        lines.append(encode_line(AssistantMessage(content=(TextBlock(text=words),), provider="p", model="m")))
    store.transcript_path(long_chat.id).write_bytes(b"".join(lines))
    store.create(title="Another chat")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#search", "pineapple")
    result = page.locator("#chats .chat", has_text="Travel notes")
    expect(result.locator(".snippet")).to_contain_text("pineapple tart", timeout=TIMEOUT)
    result.locator("button.chat-open").click()
    current = page.locator(".msg.found-current")
    expect(current).to_contain_text("pineapple tart", timeout=TIMEOUT)
    expect(current).to_be_in_viewport()
    expect(page.locator("#find-input")).to_have_value("pineapple")

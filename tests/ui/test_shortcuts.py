"""The keyboard and the composer in the real browser: shortcuts and their sheet, a composer that grows
with its text, and a draft that stays with its conversation."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000


def test_shortcuts_work_and_are_listed(page: Page, app: App) -> None:
    page.keyboard.press("Control+/")
    sheet = page.locator("#shortcuts")
    expect(sheet).to_be_visible()
    expect(sheet).to_contain_text("Ctrl+F")
    expect(sheet).to_contain_text("Find in this chat")
    sheet.get_by_role("button", name="Close").click()
    page.keyboard.press("Control+k")
    expect(page.locator("#search")).to_be_focused()
    page.keyboard.press("Control+,")
    expect(page.locator("#settings")).to_be_visible(timeout=TIMEOUT)
    page.keyboard.press("Escape")
    page.keyboard.press("Control+n")
    expect(page.locator("#composer textarea")).to_be_focused()


def test_the_composer_grows_and_a_draft_stays_with_its_chat(page: Page, app: App, anthropic_server: FakeServer) -> None:
    anthropic_server.script(wire.reply_text("One."))
    page.fill("#composer textarea", "first")
    page.press("#composer textarea", "Enter")
    expect(page.locator(".msg.assistant")).to_contain_text("One.", timeout=TIMEOUT)
    box = page.locator("#composer textarea")
    small = box.bounding_box()
    box.fill("\n".join(f"line {i}" for i in range(12)))
    box.dispatch_event("input")
    grown = box.bounding_box()
    assert small and grown and grown["height"] > small["height"] * 2
    assert grown["height"] <= page.viewport_size["height"] / 2 + 2  # type: ignore[index]
    box.fill("half a thought")
    page.keyboard.press("Control+n")  # a new chat: an empty box
    expect(box).to_have_value("")
    box.fill("new chat draft")
    page.locator("#chats .chat").first.locator("button.chat-open").click()  # back: the draft is still there
    expect(box).to_have_value("half a thought", timeout=TIMEOUT)


def test_drafts_outlast_a_reload_until_they_are_sent(page: Page, app: App, anthropic_server: FakeServer) -> None:
    anthropic_server.script(wire.reply_text("One."), wire.reply_text("Two."))
    box = page.locator("#composer textarea")
    box.fill("the new chat's words")  # typed, as a person does: each key an input event
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(box).to_have_value("the new chat's words")
    box.press("Enter")  # sent: the new chat becomes a chat, and its draft is gone
    expect(page.locator(".msg.assistant")).to_contain_text("One.", timeout=TIMEOUT)
    box.fill("half a thought")
    page.reload()  # the open chat comes back with what was typed in it
    page.wait_for_selector("body[data-ready=true]")
    expect(box).to_have_value("half a thought", timeout=TIMEOUT)
    page.keyboard.press("Control+n")
    expect(box).to_have_value("")  # the new chat's draft was sent, not kept
    page.locator("#chats .chat").first.locator("button.chat-open").click()
    expect(box).to_have_value("half a thought", timeout=TIMEOUT)
    box.press("Enter")
    expect(page.locator(".msg.assistant").last).to_contain_text("Two.", timeout=TIMEOUT)
    expect(box).to_have_value("")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".msg.assistant").last).to_contain_text("Two.", timeout=TIMEOUT)
    expect(box).to_have_value("")

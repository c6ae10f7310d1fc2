"""Where the keyboard's focus goes after an action that redraws or closes what held it: an answered approval, the
version arrows, Another answer, Retry, and Esc in the find bar. Each time it stays where the person was (or goes
to the message box), never to the page, where the next Tab would start again from the top of the window."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000

# What has the focus, said in a word: the page itself ("body") is the failure these tests look for.
FOCUSED = """() => { const at = document.activeElement;
  if (!at || at === document.body) return 'body';
  if (at.matches('#composer textarea')) return 'composer';
  if (at.matches('.permission-card')) return 'card';
  if (at.matches('.msg.assistant')) return 'answer';
  return at.getAttribute('aria-label') || at.id || at.className; }"""


def focused(page: Page) -> str:
    return str(page.evaluate(FOCUSED))


def idle(page: Page) -> None:
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)


def test_an_answered_approval_keeps_the_focus_on_its_card(page: Page, app: App, anthropic_server: FakeServer) -> None:
    anthropic_server.script(
        wire.message(wire.text("First."), wire.tool_use("bash", {"command": "touch one.txt"}, id="tb1")),
        wire.message(wire.text("Second."), wire.tool_use("bash", {"command": "touch two.txt"}, id="tb2")),
        wire.reply_text("Both made."),
    )
    page.fill("textarea.input", "make two files")
    page.keyboard.press("Enter")
    cards = page.locator(".permission-card")
    cards.first.get_by_role("button", name="Allow once").click(timeout=TIMEOUT)  # the mouse
    expect(cards).to_have_count(2, timeout=TIMEOUT)
    expect(cards.first).to_be_focused()  # the card answered, not the page
    cards.last.focus()
    page.keyboard.press("o")  # its key, the card focused
    expect(page.locator(".msg.assistant .markdown").last).to_have_text("Both made.", timeout=TIMEOUT)
    idle(page)
    expect(cards.last).to_be_focused()
    page.keyboard.press("Tab")  # on from the card, not from the top of the window
    assert focused(page) not in ("body", "skipToComposer", "skip-link", "new-chat")


def test_the_version_arrows_another_answer_and_retry_keep_the_focus_and_the_version_is_said(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(
        wire.reply_text("First."),
        wire.reply_text("Second."),
        wire.error(401, "authentication_error", "invalid x-api-key"),
        wire.reply_text("Back again."),
    )
    page.fill("textarea.input", "Name a colour")
    page.keyboard.press("Enter")
    answer = page.locator(".msg.assistant")
    expect(answer.locator(".markdown")).to_have_text("First.", timeout=TIMEOUT)
    idle(page)
    answer.get_by_role("button", name="Another answer").click()
    expect(answer.locator(".markdown")).to_have_text("Second.", timeout=TIMEOUT)
    expect(answer.locator(".version-count")).to_have_text("2 of 2", timeout=TIMEOUT)
    idle(page)
    assert focused(page) in ("composer", "answer")

    answer.get_by_role("button", name="Previous version").click()
    expect(answer.locator(".markdown")).to_have_text("First.", timeout=TIMEOUT)
    expect(page.locator("#announcer")).to_have_text("Version 1 of 2", timeout=TIMEOUT)
    # The redrawn message's arrows have it (Previous cannot be pressed at the first version: Next then).
    expect(answer.get_by_role("button", name="Next version")).to_be_focused()
    page.keyboard.press("Enter")
    expect(answer.locator(".markdown")).to_have_text("Second.", timeout=TIMEOUT)
    expect(page.locator("#announcer")).to_have_text("Version 2 of 2", timeout=TIMEOUT)
    expect(answer.get_by_role("button", name="Previous version")).to_be_focused()

    page.fill("textarea.input", "and a fruit?")
    page.keyboard.press("Enter")
    marker = page.locator(".marker.error")
    marker.get_by_role("button", name="Retry").click(timeout=TIMEOUT)
    expect(page.locator(".msg.assistant .markdown").last).to_have_text("Back again.", timeout=TIMEOUT)
    idle(page)
    assert focused(page) in ("composer", "answer")


def test_escape_in_the_find_bar_gives_the_focus_back(page: Page, app: App, anthropic_server: FakeServer) -> None:
    anthropic_server.script(wire.reply_text("Lighthouses guide ships."))
    page.fill("textarea.input", "tell me about lighthouses")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown")).to_have_text("Lighthouses guide ships.", timeout=TIMEOUT)
    idle(page)
    copy = page.get_by_role("button", name="Copy answer 1", exact=True)
    copy.focus()
    page.keyboard.press("Control+f")
    expect(page.locator("#find-input")).to_be_focused()
    page.keyboard.type("ships")
    expect(page.locator("#find-count")).to_have_text("1 of 1")
    page.keyboard.press("Escape")
    expect(page.locator("#find")).to_be_hidden()
    expect(copy).to_be_focused()  # where the person was before Ctrl+F

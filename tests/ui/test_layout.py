"""The layout from a phone to a wide monitor, in the real browser: no sideways scrolling at any width,
and below 800 px the chat list is a drawer opened by "Menu" and the header's actions fold into a menu."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000

LONG = "A line of text that goes on for a while so that wrapping is exercised. " * 6
CODE = "```python\n" + "print('a very long line of code that should scroll inside its own block') " * 4 + "\n```"


def opened(browser: Browser, app: App, width: int, height: int) -> Page:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(app.url)
    page.wait_for_selector("body[data-ready=true]")
    return page


def no_sideways_scroll(page: Page) -> None:
    overflow = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px at {page.viewport_size}"


@pytest.fixture
def chat_app(app: App, anthropic_server: FakeServer, browser: Browser) -> App:
    anthropic_server.script(wire.reply_text(f"{LONG}\n\n{CODE}"))
    page = opened(browser, app, 1280, 800)
    page.fill("textarea.input", "A question long enough to wrap on a phone screen, " * 3)
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .code")).to_be_visible(timeout=TIMEOUT)
    page.context.close()
    return app


@pytest.mark.parametrize("size", [(360, 640), (390, 844), (820, 700), (1280, 800), (1920, 1080), (2560, 1440)])
def test_every_width_fits(browser: Browser, chat_app: App, size: tuple[int, int]) -> None:
    page = opened(browser, chat_app, *size)
    expect(page.locator(".msg.assistant .code")).to_be_visible(timeout=TIMEOUT)
    no_sideways_scroll(page)
    head = page.locator("#chat-head").bounding_box()
    for button in page.locator("#chat-head button:visible, #chat-head summary:visible").all():
        box = button.bounding_box()
        assert box and head and box["x"] + box["width"] <= head["x"] + head["width"] + 1, "a header button is cut off"
    composer = page.locator("#composer textarea").bounding_box()
    assert composer and composer["x"] >= 0 and composer["x"] + composer["width"] <= size[0]
    narrow = size[0] < 800
    expect(page.get_by_role("button", name="Menu", exact=True)).to_be_visible() if narrow else expect(
        page.get_by_role("button", name="Menu", exact=True)
    ).to_be_hidden()
    expect(page.locator("#sidebar")).to_be_hidden() if narrow else expect(page.locator("#sidebar")).to_be_visible()
    page.context.close()


def test_the_drawer_and_the_header_menu_on_a_phone(browser: Browser, chat_app: App) -> None:
    page = opened(browser, chat_app, 390, 844)
    menu = page.get_by_role("button", name="Menu", exact=True)
    expect(menu).to_have_attribute("aria-expanded", "false")
    menu.click()
    expect(page.locator("#sidebar")).to_be_visible()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#new-chat")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#sidebar")).to_be_hidden()
    menu.click()
    page.locator("#chats .chat button.chat-open").first.click()  # choosing a chat closes the drawer
    expect(page.locator("#sidebar")).to_be_hidden()
    expect(page.locator("#chat-head #rename")).to_be_hidden()  # folded into the header's menu
    page.get_by_role("button", name="More actions").click()
    expect(page.locator("#chat-head #rename")).to_be_visible()
    page.locator("#chat-head #rename").click()
    expect(page.locator("dialog.ask[open]")).to_be_visible()
    expect(page.locator("#chat-head #rename")).to_be_hidden()  # the menu closed behind the dialog
    page.keyboard.press("Escape")
    page.set_viewport_size({"width": 1280, "height": 800})  # widened: everything is back in place
    expect(page.locator("#sidebar")).to_be_visible()
    expect(page.locator("#chat-head #rename")).to_be_visible()
    page.context.close()

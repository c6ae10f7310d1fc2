"""Accessibility in the real browser, checked by axe-core (bundled in the pinned axe-playwright-python):
WCAG 2 A and AA — labels on every input, names on every button, contrast AA — in light and in dark, on
the chat (with tool cards, an error and code), Settings, a dialog, and the phone layout. Plus the
keyboard: everything reachable by Tab with a visible focus ring, and `aria-live` only for finished turns. And a
journey as a keyboard and screen-reader user: who said what, which message a button acts on, an approval said
aloud once, the @ list by keys, and a new-chat key a browser tab lets the page have."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import axe_playwright_python
import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.routing import ByActor
from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000
ANSWER = "Done:\n\n```python\ndef f(x):  # twice\n    return x * 2\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |"
AXE = (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text(encoding="utf-8")


def audit(page: Page, where: str) -> None:
    """Run axe on what is on screen now; fail with every violation, each with its nodes."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE)
    result: dict[str, Any] = page.evaluate(
        """async () => await axe.run(document, {
            runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
            resultTypes: ["violations"],
        })"""
    )
    problems = [
        f"{v['id']} ({v['impact']}): {v['help']} — " + "; ".join(n["target"][0] for n in v["nodes"][:5])
        for v in result["violations"]
    ]
    assert not problems, f"{where}:\n" + "\n".join(problems)


def opened(browser: Browser, app: App, *, width: int = 1280, height: int = 800, dark: bool = False) -> Page:
    # The page's policy allows only its own scripts: the audit's own script needs the policy bypassed.
    context = browser.new_context(
        viewport={"width": width, "height": height}, bypass_csp=True, color_scheme="dark" if dark else "light"
    )
    page = context.new_page()
    page.goto(app.url)
    page.wait_for_selector("body[data-ready=true]")
    return page


@pytest.fixture
def busy_chat(app: App, anthropic_server: FakeServer, browser: Browser) -> App:
    anthropic_server.script(
        wire.message(wire.text("Listing."), wire.tool_use("list_files", {"path": "."}, id="toolu_1")),
        wire.reply_text(ANSWER),
        wire.error(401, "authentication_error", "invalid x-api-key"),
    )
    page = opened(browser, app)
    page.fill("textarea.input", "list my files")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .code")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    page.fill("textarea.input", "and again")
    page.keyboard.press("Enter")
    expect(page.locator(".marker.error")).to_be_visible(timeout=TIMEOUT)
    page.context.close()
    return app


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_the_app_passes_axe_in_light_and_dark(browser: Browser, busy_chat: App, dark: bool) -> None:
    page = opened(browser, busy_chat, dark=dark)
    expect(page.locator(".marker.error")).to_be_visible(timeout=TIMEOUT)
    page.locator(".msg.assistant").first.hover()  # the actions shown on hover are checked too
    audit(page, "the chat")
    page.locator("#chats .item-menu summary").first.click()
    audit(page, "a chat's menu")
    page.keyboard.press("Escape")
    page.click("#settings-button")
    expect(page.locator("#settings section.about")).to_be_attached(timeout=TIMEOUT)
    audit(page, "Settings")
    page.locator("#settings button.close").click()
    page.get_by_role("button", name="Chat settings").click()
    options = page.locator("dialog.chat-options-dialog")
    expect(options).to_be_visible(timeout=TIMEOUT)  # it opens once the models are read: audited open, not before
    audit(page, "Chat settings")
    page.keyboard.press("Escape")
    expect(options).to_have_count(0, timeout=TIMEOUT)
    page.click("#new-chat")
    audit(page, "a new chat")
    page.context.close()
    phone = opened(browser, busy_chat, width=390, height=844, dark=dark)
    audit(phone, "the phone layout")
    phone.get_by_role("button", name="Menu", exact=True).click()
    audit(phone, "the open drawer")
    phone.context.close()


def test_keyboard_reaches_everything_with_a_visible_focus(browser: Browser, busy_chat: App) -> None:
    page = opened(browser, busy_chat)
    expect(page.locator(".marker.error")).to_be_visible(timeout=TIMEOUT)
    page.locator("body").click(position={"x": 5, "y": 5})
    reached: list[str] = []
    for _ in range(60):
        page.keyboard.press("Tab")
        info = page.evaluate(
            """() => {
                const node = document.activeElement;
                const style = getComputedStyle(node);
                const ring = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2;
                return { id: node.id || node.className || node.tagName, ring, tag: node.tagName };
            }"""
        )
        if info["tag"] == "BODY":
            continue
        assert info["ring"], f"{info['id']} has no visible focus"
        reached.append(str(info["id"]))
    for wanted in ("new-chat", "search", "settings-button", "input", "send"):
        assert any(wanted in r for r in reached), f"Tab never reaches {wanted}: {reached}"
    # Only finished turns are announced: nothing streaming, no counter, is a live region.
    live = page.evaluate(
        "[...document.querySelectorAll('[aria-live], [role=status], [role=log]')].map((n) => n.id || n.className)"
    )
    assert live == ["announcer"], live
    page.context.close()


# What the live region says, as a screen reader hears it: each text it is given, in order.
LISTEN = """() => {
  window.heard = [];
  const announcer = document.querySelector('#announcer');
  new MutationObserver(() => window.heard.push(announcer.textContent))
    .observe(announcer, { childList: true, characterData: true, subtree: true });
}"""


def target_sized(button: Locator) -> None:
    expect(button).to_be_visible()
    box = button.bounding_box()
    assert box and box["width"] >= 24 and box["height"] >= 24, box  # WCAG 2.5.8


def test_a_keyboard_and_screen_reader_user_gets_through_a_chat_and_a_group(
    browser: Browser, app: App, anthropic_server: FakeServer
) -> None:
    with httpx.Client(base_url=app.base, headers={"X-Orkas-Token": app.token}, timeout=30) as client:
        for name in ("coder", "critic"):
            agent = {"name": name, "description": name, "prompt": f"You are {name}-bot."}
            made = client.post("/api/agents", json=agent)
            assert made.status_code == 201, made.text
    router = ByActor({"critic": "critic-bot"})
    router.add("critic", wire.reply_text("Clear enough."))
    anthropic_server.script(
        wire.message(wire.text("Writing it."), wire.tool_use("write_file", {"path": "plan.md", "content": "# Plan"})),
        wire.reply_text("Written."),
        router,
    )
    page = opened(browser, app)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.evaluate(LISTEN)
    box = page.get_by_role("textbox", name="Message Orkas")

    # The first Tab offers the message box, visibly; Enter goes there.
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the message box")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(box).to_be_focused()
    page.keyboard.type("write a plan")
    page.keyboard.press("Enter")

    # An approval is said aloud; opening the chat again replays the question, and it is not said again.
    card = page.get_by_role("group", name="Permission needed")
    expect(card).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#announcer")).to_have_text(re.compile(r"^Approval needed: write_file\b"))
    expect(page.locator("#chats [aria-current=page]")).to_have_count(1, timeout=TIMEOUT)
    page.keyboard.press("Control+/")  # a browser tab: the new-chat key it lists is one a page may have
    sheet = page.locator("#shortcuts")
    expect(sheet).to_contain_text("Ctrl+Shift+O")
    expect(sheet).not_to_contain_text("Ctrl+N")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Shift+O")
    expect(page.locator("#title")).to_have_text("New chat")
    expect(box).to_be_focused()
    expect(page.locator("#chats [aria-current=page]")).to_have_count(0)
    page.locator("#chats .chat-open").first.click()
    expect(page.locator("#chats .chat-open").first).to_have_attribute("aria-current", "page", timeout=TIMEOUT)
    expect(card).to_be_visible(timeout=TIMEOUT)
    heard = page.evaluate("window.heard")
    assert sum(text.startswith("Approval needed") for text in heard) == 1, heard
    card.get_by_role("button", name="Allow once").click()

    # Who said what, and which message each button acts on.
    you = page.get_by_role("article", name="You said")
    orkas = page.get_by_role("article", name="Orkas answered")
    expect(orkas).to_contain_text("Written.", timeout=TIMEOUT)
    expect(you).to_have_text("write a plan")
    for button in (
        orkas.get_by_role("button", name="Copy answer 1", exact=True),
        orkas.get_by_role("button", name="Another answer instead of answer 1", exact=True),
        you.get_by_role("button", name="Copy your message 1", exact=True),
        you.get_by_role("button", name="Edit your message 1", exact=True),
    ):
        target_sized(button)

    # A group: @ opens a list the arrows move through; Enter takes a name and sends nothing; Escape closes it.
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    for name in ("coder", "critic"):
        page.get_by_role("combobox", name="Add an agent…").select_option(name)
        expect(page.locator(f'#members .member[data-member="{name}"]')).to_be_visible(timeout=TIMEOUT)
    box.focus()
    page.keyboard.type("@")
    mentions = page.get_by_role("listbox", name="Members to mention")
    expect(mentions.get_by_role("option")).to_have_text(["@coder", "@critic", "@commander"])
    page.keyboard.press("ArrowDown")
    critic = mentions.get_by_role("option", name="@critic")
    expect(critic).to_have_attribute("aria-selected", "true")
    expect(box).to_have_attribute("aria-activedescendant", critic.get_attribute("id") or "?")
    page.keyboard.press("Enter")
    expect(box).to_have_value("@critic ")
    expect(mentions).to_be_hidden()
    page.keyboard.type("is this clear? @")
    expect(mentions).to_be_visible()
    page.keyboard.press("Escape")
    expect(mentions).to_be_hidden()
    page.keyboard.press("Backspace")
    page.keyboard.press("Enter")
    expect(page.get_by_role("article", name="critic answered")).to_contain_text("Clear enough.", timeout=TIMEOUT)
    expect(you).to_have_text(["write a plan", "@critic is this clear?"])  # the keys that chose sent nothing
    expect(orkas.last).to_contain_text("Written.")  # the history, now from the group's bus
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    page.keyboard.type("@c")
    expect(mentions.get_by_role("option")).to_have_count(3)
    audit(page, "a group chat with the @ list open")
    page.context.close()
    assert not errors, errors

"""Accessibility in the real browser, checked by axe-core (bundled in the pinned axe-playwright-python):
WCAG 2 A and AA — labels on every input, names on every button, contrast AA — in light and in dark, on
the chat (with tool cards, an error and code), Settings, a dialog, and the phone layout. Plus the
keyboard: everything reachable by Tab with a visible focus ring, and `aria-live` only for finished turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import axe_playwright_python
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.fakes import anthropic as wire
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
    audit(page, "Chat settings")
    page.keyboard.press("Escape")
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

"""Changing the language applies at once to the whole app — no reload — and no English string is left
on screen: the page, the composer, the chat list, the open chat's actions and the settings dialog."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App
from tests.ui.test_strings import tables

TIMEOUT = 15_000

# Every visible piece of text, accessible name, tooltip and placeholder on the page (and open dialogs).
VISIBLE = """() => {
  const seen = new Set();
  const visible = (node) => node.checkVisibility ? node.checkVisibility() : node.offsetParent !== null;
  for (const node of document.querySelectorAll("body *")) {
    if (!visible(node) || node.closest(".markdown, .msg.user .text, code, .path, .chat-open, #title")) continue;
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE && child.textContent.trim()) seen.add(child.textContent.trim());
    }
    for (const name of ["aria-label", "title", "placeholder"]) {
      const value = node.getAttribute(name);
      if (value && value.trim()) seen.add(value.trim());
    }
  }
  return [...seen];
}"""


def english_only() -> set[str]:
    languages = tables()
    english, chinese = languages["en"], languages["zh"]
    return {text for key, text in english.items() if "{" not in text and text != chinese[key] and len(text) > 1}


def test_switching_language_translates_everything_at_once(page: Page, app: App, anthropic_server: FakeServer) -> None:
    anthropic_server.script(wire.reply_text("Sure."))
    page.fill("textarea.input", "hello")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown")).to_have_text("Sure.", timeout=TIMEOUT)
    page.click("#settings-button")
    expect(page.locator("#settings section.about")).to_be_attached(timeout=TIMEOUT)
    english = english_only()
    before = set(page.evaluate(VISIBLE)) & english
    assert {"Send", "Settings", "Orkas answered", "Providers", "Chat settings"} <= before  # the check sees them
    page.locator("#settings").get_by_role("button", name="Language").click()
    page.select_option("#settings select[name=language]", "zh")
    expect(page.locator("html")).to_have_attribute("lang", "zh", timeout=TIMEOUT)
    expect(page.locator("#composer button.send")).to_have_text("发送", timeout=TIMEOUT)  # no reload
    expect(page.locator("#settings nav.settings-menu button").first).to_have_text("模型提供方", timeout=TIMEOUT)
    expect(page.locator("#settings section.language")).to_be_in_viewport()
    expect(page.locator("#settings .vault p").first).to_contain_text("密钥", timeout=TIMEOUT)  # the key-storage note
    left = sorted(set(page.evaluate(VISIBLE)) & english)
    assert not left, f"still in English with the dialog open: {left}"
    page.locator("#settings button.close").click()
    edit = page.locator(".msg.user").get_by_role("button", name="编辑你的第 1 条消息")
    expect(edit).to_have_count(1, timeout=TIMEOUT)
    left = sorted(set(page.evaluate(VISIBLE)) & english)
    assert not left, f"still in English in the chat: {left}"
    page.click("#new-chat")
    left = sorted(set(page.evaluate(VISIBLE)) & english)
    assert not left, f"still in English on a new chat: {left}"


def test_a_language_change_on_a_new_chat_s_blank_page_keeps_what_was_picked_there(
    page: Page, app: App, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    headers = {"X-Orkas-Token": app.token}
    made = httpx.post(
        f"{app.base}/api/agents",
        headers=headers,
        timeout=10,
        json={"name": "coder", "description": "codes", "prompt": "Codes."},
    )
    assert made.status_code == 201, made.text
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.click("#new-in-folder")  # a chat in a folder, with a member, picked before its first message
    page.locator("dialog.ask[open] input").fill(str(project))
    page.locator("dialog.ask[open] button[type=submit]").click()
    expect(page.locator("#messages .chat-folder")).to_contain_text(str(project.resolve()), timeout=TIMEOUT)
    page.locator("#members select.add-member").select_option("coder")
    expect(page.locator('#members .member[data-member="coder"]')).to_be_visible(timeout=TIMEOUT)
    page.click("#settings-button")
    page.locator("#settings").get_by_role("button", name="Language").click()
    page.select_option("#settings select[name=language]", "zh")
    expect(page.locator("#composer button.send")).to_have_text("发送", timeout=TIMEOUT)
    page.locator("#settings button.close").click()
    expect(page.locator("#title")).to_have_text("新对话")
    expect(page.locator('#members .member[data-member="coder"]')).to_be_visible()  # still picked
    expect(page.locator("#messages .chat-folder")).to_contain_text(str(project.resolve()))
    anthropic_server.script(wire.reply_text("好。"))
    page.fill("textarea.input", "你好")
    page.keyboard.press("Enter")
    expect(page.locator("#chats .chat")).to_have_count(1, timeout=TIMEOUT)
    [chat] = httpx.get(f"{app.base}/api/conversations", headers=headers, timeout=10).json()
    assert chat["workspace"] == str(project.resolve())  # made with what was picked before the change
    members = httpx.get(f"{app.base}/api/conversations/{chat['id']}/members", headers=headers, timeout=10).json()
    assert members["members"] == ["coder"]
    expect(page.locator(".msg.assistant")).to_contain_text("好。", timeout=TIMEOUT)

"""The composer's model switcher and the chat's own settings, in the real browser: picked on a new chat,
sent to the provider (model, instructions in the system prompt, temperature), remembered per chat across
a reload, and not leaking into other chats."""

from __future__ import annotations

import httpx
from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000


def system_text(body: dict[str, object]) -> str:
    system = body.get("system", "")
    return system if isinstance(system, str) else " ".join(b["text"] for b in system)  # type: ignore[index, union-attr]


def test_model_and_instructions_per_chat(page: Page, app: App, anthropic_server: FakeServer) -> None:
    added = httpx.post(
        f"{app.base}/api/providers",
        json={
            "name": "work",
            "kind": "anthropic",
            "key": "sk-ant-work-key",
            "base_url": anthropic_server.url,
            "models": ["claude-opus-4-1", "claude-haiku-4-5"],
        },
        headers={"X-Orkas-Token": app.token},
    )
    assert added.status_code == 201, added.text
    anthropic_server.script(wire.reply_text("Bonjour."), wire.reply_text("Hello."))
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    switcher = page.get_by_role("combobox", name="Model")
    expect(switcher.locator("option")).to_have_text(
        ["Default (work/claude-opus-4-1)", "work/claude-opus-4-1", "work/claude-haiku-4-5", "claude-sonnet-4-5"]
    )
    switcher.select_option("work/claude-haiku-4-5")
    page.get_by_role("button", name="Chat settings").click()
    dialog = page.get_by_role("dialog", name="Chat settings")
    dialog.get_by_label("Instructions for this chat").fill("Always answer in French.")
    dialog.get_by_label("Temperature").fill("0.2")
    dialog.get_by_role("button", name="Save").click()
    page.fill("textarea.input", "Hi")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown")).to_have_text("Bonjour.", timeout=TIMEOUT)
    sent = anthropic_server.requests[-1].json
    # Anthropic's API takes no temperature any more: it is kept for the providers that take one.
    assert sent["model"] == "claude-haiku-4-5" and "temperature" not in sent
    assert "Always answer in French." in system_text(sent)

    page.click("#new-chat")  # another chat: the default again
    expect(switcher).to_have_value("")
    page.fill("textarea.input", "Hi again")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown")).to_have_text("Hello.", timeout=TIMEOUT)
    other = anthropic_server.requests[-1].json
    assert other["model"] == "claude-opus-4-1" and "temperature" not in other
    assert "Always answer in French." not in system_text(other)

    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.locator("#chats .chat", has_text="Hi").filter(has_not_text="again").locator("button.chat-open").click()
    expect(switcher).to_have_value("work/claude-haiku-4-5", timeout=TIMEOUT)
    page.get_by_role("button", name="Chat settings").click()
    expect(dialog.get_by_label("Instructions for this chat")).to_have_value("Always answer in French.")
    dialog.get_by_label("Temperature").fill("7")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_be_visible()  # out of range: said at the field, nothing saved
    dialog.get_by_role("button", name="Cancel").click()
    chats = httpx.get(f"{app.base}/api/conversations", headers={"X-Orkas-Token": app.token}).json()
    assert sorted(c["temperature"] for c in chats if c["temperature"] is not None) == [0.2]

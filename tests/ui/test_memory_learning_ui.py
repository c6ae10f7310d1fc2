"""Memory and learning in the real browser: a memory write shows in the chat as "Remembered: …" with Undo (live
and after a reload); the switch in Settings → Memory; a chat bound to a named agent in Chat settings, which
then answers with its own instructions; the notice at start when a reflection's changes wait for the person."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000


def settings_of(app: App) -> dict[str, object]:
    return dict(json.loads((app.home / "settings.json").read_text())["preferences"])


def turn_memory_on(app: App) -> None:
    changed = httpx.put(
        f"{app.base}/api/settings/preferences",
        json={"memory": True, "offered": True},
        headers={"X-Orkas-Token": app.token},
    )
    assert changed.status_code == 200, changed.text


def test_a_memory_write_shows_remembered_with_undo_live_and_after_a_reload(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    turn_memory_on(app)
    anthropic_server.script(
        wire.message(wire.tool_use("memory", {"action": "add", "text": "The user likes tea."}, id="m1")),
        wire.reply_text("Noted."),
    )
    page.fill("textarea.input", "I like tea; remember it.")
    page.keyboard.press("Enter")
    line = page.locator("#messages .remembered")
    expect(line).to_contain_text("Remembered: The user likes tea.", timeout=TIMEOUT)
    notes = app.home / "memory" / "notes.md"
    assert "The user likes tea." in notes.read_text()
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator("#messages .remembered")).to_contain_text("Remembered: The user likes tea.", timeout=TIMEOUT)
    page.locator("#messages .remembered").get_by_role("button", name="Undo").click()
    expect(page.locator("#messages .remembered")).to_contain_text("Undone", timeout=TIMEOUT)
    assert "tea" not in notes.read_text()


def test_memory_is_off_until_the_switch_in_settings(page: Page, app: App) -> None:
    assert settings_of(app).get("memory") in (None, False)
    page.click("#settings-button")
    page.locator("#settings nav.settings-menu").get_by_role("button", name="Memory").click()
    section = page.locator("#settings section.memory")
    expect(section.locator(".memory-off")).to_be_visible(timeout=TIMEOUT)
    section.locator("input[name=memory]").check()
    expect(section.locator(".memory-off")).to_have_count(0, timeout=TIMEOUT)
    assert settings_of(app)["memory"] is True


def test_a_chat_bound_to_a_named_agent_answers_with_its_instructions(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    headers = {"X-Orkas-Token": app.token}
    made = httpx.post(
        f"{app.base}/api/agents",
        json={"name": "analyst", "description": "totals", "prompt": "You are the analyst; answer in tables."},
        headers=headers,
    )
    assert made.status_code == 201, made.text
    anthropic_server.script(wire.reply_text("| month | total |"))
    page.get_by_role("button", name="Chat settings").click()
    dialog = page.get_by_role("dialog", name="Chat settings")
    dialog.get_by_label("Answered by").select_option("analyst")
    dialog.get_by_role("button", name="Save").click()
    expect(page.get_by_role("button", name="Chat settings · analyst")).to_be_visible(timeout=TIMEOUT)
    page.fill("textarea.input", "Totals by month, please.")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown")).to_contain_text("month", timeout=TIMEOUT)
    system = json.dumps(anthropic_server.requests[0].json["system"])
    assert "You are the analyst; answer in tables." in system
    chats = httpx.get(f"{app.base}/api/conversations", headers=headers).json()
    assert chats[0]["agent"] == "analyst"


def test_changes_a_reflection_held_are_announced_at_start(browser: object, tmp_path: Path, app: App) -> None:
    from orkas.adapter.learning.evolution import Evolution
    from orkas.adapter.learning.signals import SignalLog

    folder = app.home / "agents" / "analyst"
    folder.mkdir(parents=True)
    (folder / "AGENT.md").write_text("---\nname: analyst\ndescription: totals\n---\nYou total things.\n")

    async def never(*_args: object) -> tuple[str, int]:
        raise AssertionError("no reflection here")

    evolution = Evolution(app.home, SignalLog(app.home / "signals"), lambda *_: [], never, lambda: ["analyst"])
    held = [{"kind": "memo", "name": "strategies", "before": "", "after": "- WHEN x THEN y", "why": "it read a file"}]
    evolution._propose("analyst", held, ["the output of read_file"], [], "user_correction")
    context = browser.new_context(viewport={"width": 1200, "height": 800})  # type: ignore[attr-defined]
    page = context.new_page()
    try:
        page.goto(app.url)
        page.wait_for_selector("body[data-ready=true]")
        notice = page.locator("#notices .proposals-waiting")
        expect(notice).to_contain_text("1 things your agents learned wait for your OK", timeout=TIMEOUT)
        notice.get_by_role("button", name="Review").click()
        expect(page.locator("#settings section.learning .proposals .proposal")).to_contain_text("WHEN x THEN y")
    finally:
        context.close()

"""Folders in the real browser against a real `orkas serve` (issue 35 §13): "In a folder…" and Settings →
Knowledge, typed in a browser tab, or picked and dropped in the desktop window — whose bridge is injected here
as pywebview exposes it (`window.pywebview.api`, the paths of a drop handed to `window.orkasDropped` as
desktop/window.py does); the real window's drop is tests/desktop/test_window.py's. No test waits a fixed time."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.ui.conftest import App, start_app

TIMEOUT = 15_000

# What the desktop window gives the page: the bridge's folder picker answers with the test's next pick.
BRIDGE = """
window.picks = %s;
window.attached = [];
window.pywebview = { api: {
  pick_folder: async () => window.picks.shift() ?? null,
  attach_paths: async (conversation, paths) => { window.attached.push(paths); return []; },
} };
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[App]:
    home = tmp_path / "home"
    home.mkdir()
    settings = {"preferences": {"auto_title": False, "embeddings": "none"}}  # keyword search: no model to load
    (home / "settings.json").write_text(json.dumps(settings))
    app = start_app(home)
    yield app
    app.stop()


def open_page(browser: Any, app: App, picks: list[str | None] | None = None) -> tuple[Page, list[str]]:
    """The app in a fresh tab (with the desktop's bridge when `picks` is given), and what the page raised."""
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    if picks is not None:
        context.add_init_script(BRIDGE % json.dumps(picks))
    page: Page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(app.url)
    page.wait_for_selector("body[data-ready=true]")
    return page, errors


def chats(app: App) -> list[dict[str, Any]]:
    return httpx.get(f"{app.base}/api/conversations", headers={"X-Orkas-Token": app.token}, timeout=10).json()


def test_in_a_folder_typed_in_a_browser_leaves_no_chat_behind_when_cancelled_or_refused(
    browser: Any, served: App, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    page, errors = open_page(browser, served)
    try:
        dialog = page.locator("dialog.ask[open]")
        page.click("#new-in-folder")
        dialog.get_by_role("button", name="Cancel").click()
        expect(dialog).to_have_count(0)

        page.click("#new-in-folder")
        dialog.locator("input").fill("/")  # the policy refuses it (it holds the home folder): said, kept, asked again
        dialog.locator("button[type=submit]").click()
        expect(dialog.locator("[role=alert]")).to_contain_text("cannot be a chat's folder", timeout=TIMEOUT)
        expect(dialog.locator("input")).to_have_value("/")
        dialog.locator("input").fill("project")  # relative: from wherever the server runs
        dialog.locator("button[type=submit]").click()
        expect(dialog.locator("[role=alert]")).to_contain_text("is not a full path", timeout=TIMEOUT)
        dialog.get_by_role("button", name="Cancel").click()
        expect(dialog).to_have_count(0)
        assert chats(served) == []  # nothing was made
        expect(page.locator("#chats .chat")).to_have_count(0)

        page.click("#new-in-folder")
        dialog.locator("input").fill(str(project))
        dialog.locator("button[type=submit]").click()
        expect(page.locator("#messages .chat-folder")).to_contain_text(str(project.resolve()), timeout=TIMEOUT)
        assert chats(served) == []  # made by its first message, like any new chat
        page.fill("#composer textarea", "hello")
        page.press("#composer textarea", "Enter")
        expect(page.locator("#chats .chat")).to_have_count(1, timeout=TIMEOUT)
        [chat] = chats(served)
        assert chat["workspace"] == str(project.resolve())
        assert not errors, errors
    finally:
        page.context.close()


def test_in_a_folder_in_the_window_uses_the_native_picker(browser: Any, served: App, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    page, errors = open_page(browser, served, picks=[None, "/etc", str(project)])  # cancelled, refused, chosen
    try:
        page.click("#new-in-folder")  # the picker was closed: nothing happens
        page.wait_for_function("window.picks.length === 2")
        page.click("#new-in-folder")
        expect(page.locator(".toast")).to_contain_text("protected location", timeout=TIMEOUT)
        expect(page.locator("dialog.ask")).to_have_count(0)  # the window has no typed path to ask for
        assert chats(served) == []
        page.click("#new-in-folder")
        expect(page.locator("#messages .chat-folder")).to_contain_text(str(project.resolve()), timeout=TIMEOUT)
        assert chats(served) == []
        assert not errors, errors
    finally:
        page.context.close()


def drop(page: Page, target: str, name: str) -> None:
    """A folder dropped on `target` as the page sees it: a file list with only a name (never a path)."""
    page.evaluate(
        """([selector, name]) => {
            const target = document.querySelector(selector);
            const data = new DataTransfer();
            data.items.add(new File([], name));
            for (const type of ["dragenter", "dragover", "drop"]) {
                target.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
            }
        }""",
        [target, name],
    )


def handbook(tmp_path: Path, name: str, words: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "rules.md").write_text(f"# Rules\n{words}\n")
    return folder


def test_a_knowledge_folder_is_picked_or_dropped_in_the_window(browser: Any, served: App, tmp_path: Path) -> None:
    picked = handbook(tmp_path, "picked", "Lighthouse keepers count ships.")
    dropped = handbook(tmp_path, "dropped", "Harbour pilots steer ships.")
    page, errors = open_page(browser, served, picks=[str(picked)])
    try:
        page.click("#settings-button")
        panel = page.locator("section.knowledge")
        panel.get_by_role("button", name="Choose a folder…").click()
        expect(panel.locator(".kb-docs .entry")).to_have_count(1, timeout=TIMEOUT)
        expect(panel.locator(".kb-watched li")).to_contain_text(str(picked.resolve()))

        drop(page, "section.knowledge .kb-docs", "dropped")  # anywhere on the section
        page.evaluate("(paths) => window.orkasDropped(paths)", [str(dropped)])  # what window.py sends next
        expect(panel.locator(".kb-docs .entry")).to_have_count(2, timeout=TIMEOUT)
        expect(panel.locator(".kb-watched li")).to_have_count(2)
        assert page.evaluate("window.attached") == []  # not an attachment for a chat

        drop(page, "section.knowledge", "nothing")  # a drop the window had no path for
        page.evaluate("() => window.orkasDropped([])")
        expect(panel.locator(".kb-drop-status")).to_contain_text("type its full path", timeout=TIMEOUT)
        page.keyboard.press("Escape")
        page.evaluate("(paths) => window.orkasDropped(paths)", [str(dropped / "rules.md")])  # elsewhere: the chat's
        page.wait_for_function("window.attached.length === 1")
        assert not errors, errors
    finally:
        page.context.close()


def test_in_a_browser_a_dropped_folder_says_the_path_must_be_typed(browser: Any, served: App, tmp_path: Path) -> None:
    folder = handbook(tmp_path, "handbook", "The lighthouse keeper counts ships.\n" + "Filler line.\n" * 80)
    (folder / "more.md").write_text("Nothing about towers.\n" * 40 + "Lighthouses guide the keeper's ships.\n")
    page, errors = open_page(browser, served)
    try:
        page.click("#settings-button")
        panel = page.locator("section.knowledge")
        expect(panel.locator(".kb-drop-status")).to_contain_text("type the full path", timeout=TIMEOUT)
        expect(panel.get_by_role("button", name="Choose a folder…")).to_have_count(0)  # no picker in a tab
        drop(page, "section.knowledge", "handbook")
        status = panel.locator(".kb-drop-status")
        expect(status).to_contain_text("only the name of what was dropped (handbook)", timeout=TIMEOUT)
        expect(panel.locator("input[name=path]")).to_be_focused()
        assert chats(served) == []  # the composer did not take it as an attachment (which makes a chat)

        panel.locator("input[name=path]").fill(str(folder))
        panel.locator(".kb-add-path button[type=submit]").click()
        expect(panel.locator(".kb-docs .entry")).to_have_count(2, timeout=TIMEOUT)
        query = panel.locator("input[name=q]")
        query.fill("lighthouse keepers")
        query.press("Enter")
        results = panel.locator(".kb-results li")
        expect(results).to_have_count(2, timeout=TIMEOUT)
        marks = panel.locator(".kb-results mark")
        expect(marks.first).to_be_in_viewport()  # the results are scrolled to
        words = {text.lower() for text in marks.all_inner_texts()}
        assert words == {"lighthouse", "keeper", "lighthouses"}, words  # the index's stemming, as it matched
        more = results.filter(has_text="more.md")
        expect(more.locator(".snippet")).to_contain_text("Lighthouses guide")  # the passage around the match
        assert not errors, errors
    finally:
        page.context.close()


def test_a_message_sent_while_the_chosen_folder_is_checked_goes_to_a_chat_in_that_folder(
    browser: Any, served: App, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    page, errors = open_page(browser, served, [str(project)])
    held: list[Any] = []
    page.route("**/api/conversations/workspace", lambda route: held.append(route))  # answered only when let go
    page.locator("#new-in-folder").click()
    deadline = time.monotonic() + 15
    while not held:
        assert time.monotonic() < deadline, "the folder was never checked"
        page.wait_for_timeout(20)  # lets the page run while we look again
    page.fill("textarea.input", "tidy the project")
    page.keyboard.press("Enter")  # before the check answered: a fast person, or a slow machine
    held[0].continue_()
    deadline = time.monotonic() + 15
    while not chats(served):
        assert time.monotonic() < deadline, "no chat was made"
        page.wait_for_timeout(50)
    [made] = chats(served)
    assert made["workspace"] == str(project.resolve()) and not errors

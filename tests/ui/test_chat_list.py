"""The chat list in the real browser: grouped by day, pinning keeps a chat on top across reloads."""

from __future__ import annotations

import json
import time

from playwright.sync_api import Page, expect

from tests.ui.conftest import App

TIMEOUT = 15_000


def test_chats_are_grouped_by_day_and_a_pinned_one_stays_on_top(page: Page, app: App) -> None:
    now = time.time()
    folder = app.home / "conversations"
    for ident, title, age_days in (("aaaaaaaa11", "old notes", 30), ("bbbbbbbb22", "this morning", 0)):
        (folder / ident).mkdir(parents=True)
        meta = {
            "id": ident,
            "title": title,
            "created": now - age_days * 86400,
            "updated": now - age_days * 86400,
            "workspace": str(app.home / "workspaces" / ident),
        }
        (folder / ident / "meta.json").write_text(json.dumps(meta))
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    items = page.locator("#chats > li")
    expect(items).to_have_text(["Today", "this morning", "Earlier", "old notes"], timeout=TIMEOUT)
    page.locator("#chats .chat", has_text="old notes").get_by_role("button", name="Pin").click()
    expect(items).to_have_text(["Pinned", "old notes", "Today", "this morning"], timeout=TIMEOUT)
    assert json.loads((folder / "aaaaaaaa11" / "meta.json").read_text())["pinned"] is True
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(items).to_have_text(["Pinned", "old notes", "Today", "this morning"], timeout=TIMEOUT)
    page.locator("#chats .chat", has_text="old notes").get_by_role("button", name="Unpin").click()
    expect(items).to_have_text(["Today", "this morning", "Earlier", "old notes"], timeout=TIMEOUT)

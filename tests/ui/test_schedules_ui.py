"""Settings → Schedules in the real page against a real `orkas serve`: who fires them, a bad time said without losing
what was typed, a schedule added for a chat, switched off and removed."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.ui.conftest import App

TIMEOUT = 15_000


def test_a_schedule_is_added_for_a_chat_said_back_switched_off_and_removed(page: object, app: App) -> None:
    headers = {"X-Orkas-Token": app.token}
    chat = httpx.post(f"{app.base}/api/conversations", json={"title": "Build watch"}, headers=headers).json()["id"]
    page.reload()  # type: ignore[attr-defined]
    page.wait_for_selector("body[data-ready=true]")  # type: ignore[attr-defined]
    page.click("#settings-button")  # type: ignore[attr-defined]
    section = page.locator("#settings section.schedules")  # type: ignore[attr-defined]
    expect(section.locator(".firing-here")).to_have_text("This window fires them while it is open.", timeout=TIMEOUT)
    form = section.locator("form.new-schedule")
    form.locator("select[name=conversation]").select_option(chat)
    form.locator("textarea[name=prompt]").fill("check the build and say what failed")
    form.locator("input[name=when]").fill("every blursday")
    form.locator("button[type=submit]").click()
    expect(form.locator(".schedule-problem")).to_contain_text("'blursday' is not a day of the week", timeout=TIMEOUT)
    expect(form.locator("textarea[name=prompt]")).to_have_value("check the build and say what failed")
    form.locator("input[name=when]").fill("every weekday at 8:00")
    form.locator("button[type=submit]").click()
    item = section.locator("li.schedule")
    expect(item.locator("strong")).to_have_text("every weekday at 8:00", timeout=TIMEOUT)
    expect(item.locator(".prompt")).to_have_text("check the build and say what failed")
    expect(item).to_contain_text("Build watch")
    [kept] = httpx.get(f"{app.base}/api/schedules", headers=headers).json()["schedules"]
    assert kept["conversation"] == chat and kept["cron"] == "0 8 * * 1-5"
    item.locator("input[type=checkbox]").uncheck()
    expect(section.locator("li.schedule")).to_contain_text("off", timeout=TIMEOUT)
    section.locator("li.schedule button", has_text="Remove").click()
    expect(section.locator("li.hint", has_text="No schedules yet")).to_be_visible(timeout=TIMEOUT)
    assert httpx.get(f"{app.base}/api/schedules", headers=headers).json()["schedules"] == []

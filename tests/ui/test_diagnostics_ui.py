"""Diagnostics in the real browser: Settings → About sets the log level and saves a bundle; an error
of the page itself becomes a crash report that the next start shows once, with "Save diagnostics"."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.ui.conftest import App

TIMEOUT = 15_000


def test_about_sets_the_log_level_and_saves_a_bundle(page: Page, app: App) -> None:
    page.click("#settings-button")
    about = page.locator("#settings section.about")
    expect(about.locator(".version")).to_contain_text("Orkas ", timeout=TIMEOUT)
    expect(about.locator("code.path")).to_have_text(str(app.home / "logs"))
    about.locator("select[name=log_level]").select_option("debug")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        saved = json.loads((app.home / "settings.json").read_text()) if (app.home / "settings.json").exists() else {}
        if saved.get("preferences", {}).get("log_level") == "debug":
            break
        time.sleep(0.05)
    assert saved["preferences"]["log_level"] == "debug"
    with page.expect_download() as download:
        about.get_by_role("button", name="Save diagnostics").click()
    expect(about.locator(".diagnostics-result")).to_contain_text("nothing was sent", timeout=TIMEOUT)
    bundle = Path(download.value.path())
    with zipfile.ZipFile(bundle) as opened:
        assert {"README.txt", "about.json", "settings.json", "self-check.json"} <= set(opened.namelist())
    bundles = list((app.home / "diagnostics").glob("orkas-diagnostics-*.zip"))
    assert len(bundles) == 1 and bundles[0].read_bytes() == bundle.read_bytes()
    deadline = time.monotonic() + 10  # the request's line is written just after its answer
    while "POST /api/diagnostics 200" not in (logged := logs(app)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "DEBUG" in logged and "POST /api/diagnostics 200" in logged  # the new level applied at once


def logs(app: App) -> str:
    return "".join(p.read_text() for p in (app.home / "logs").glob("*.log"))


def test_a_page_error_is_kept_and_shown_once_at_the_next_start(browser: Any, app: App) -> None:
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(app.url)
        page.wait_for_selector("body[data-ready=true]")
        page.evaluate("setTimeout(() => { throw new Error('render failed for dana@example.org'); })")
        page.evaluate("setTimeout(() => Promise.reject(new Error('lost promise')))")
        deadline = time.monotonic() + 10
        while len(list((app.home / "crashes").glob("*.json"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        reports = [json.loads(p.read_text()) for p in (app.home / "crashes").glob("*.json")]
        assert sorted(r["summary"].split(":")[0] for r in reports) == ["page error", "page unhandled rejection"]
        assert all("dana@example.org" not in json.dumps(r) for r in reports)

        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        notice = page.locator("#notices .crash-notice")
        expect(notice).to_contain_text("ran into 2 problem", timeout=TIMEOUT)
        notice.get_by_role("button", name="Dismiss").click()
        expect(notice).to_have_count(0)
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        page.wait_for_load_state("networkidle")
        expect(page.locator("#notices .crash-notice")).to_have_count(0)  # shown once
    finally:
        context.close()

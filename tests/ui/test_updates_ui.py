"""Settings → About's updates in the real page against a real `orkas serve` and a local signed feed: the available
version and its notes, "Check now" reading the feed again, and the daily check's switch kept."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from orkas.adapter.settings.data_format import CURRENT
from orkas.adapter.updates.install import Installation
from tests.fakes.releases import ReleaseHost, artifact, new_key, portable, release_host
from tests.ui.conftest import App, start_app

TIMEOUT = 15_000


@pytest.fixture
def host() -> Iterator[ReleaseHost]:
    with release_host() as serving:
        yield serving


def test_about_shows_the_offer_checks_again_on_request_and_keeps_the_switch(
    browser: object, host: ReleaseHost, tmp_path: Path
) -> None:
    key = new_key()
    data = portable("99.0.0", CURRENT)
    url = host.put("/orkas.tar.gz", data)
    feed = host.publish(key, [{"version": "99.0.0", "notes": "Hooks around tool use.", "data_format": CURRENT,
        "artifacts": [artifact(url, data, platform=Installation("tar.gz", Path("/o")).platform)]}])  # fmt: skip
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"preferences": {"auto_title": False, "update_feed": feed}}))
    app: App = start_app(home, ORKAS_UPDATE_KEY=key.public)
    context = browser.new_context()  # type: ignore[attr-defined]
    try:
        page = context.new_page()
        page.goto(app.url)
        page.wait_for_selector("body[data-ready=true]")
        page.click("#settings-button")
        about = page.locator("#settings section.about")
        expect(about.locator("button", has_text="Check now")).to_be_visible(timeout=TIMEOUT)
        assert host.requests == []  # ORKAS_UPDATES=off here: only the person's click reads the feed
        about.locator("button", has_text="Check now").click()
        expect(about.locator(".available")).to_have_text("Orkas 99.0.0 is available", timeout=TIMEOUT)
        expect(about.locator(".release-notes")).to_have_text("Hooks around tool use.")
        expect(about.get_by_text("runs from a source checkout")).to_be_visible()
        assert [r["path"] for r in host.requests] == ["/feed.json"]
        box = about.locator("input[name=update_check]")
        expect(box).to_be_checked()
        box.uncheck()
        saved = Path(home / "settings.json")
        deadline = time.monotonic() + 15
        while json.loads(saved.read_text())["preferences"].get("update_check") is not False:
            assert time.monotonic() < deadline, "the switch was not saved"
            time.sleep(0.05)
    finally:
        context.close()
        app.stop()

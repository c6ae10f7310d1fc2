"""Settings → Phone in the real browser: off by default, turned on, a phone paired from the QR code's
contents (over the real TLS mirror), listed, and revoked once the person confirms — after which its token is
refused."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.ui.conftest import App, answer_dialog, start_app

TIMEOUT = 15_000


@pytest.fixture
def phone_app(tmp_path: Path) -> Iterator[App]:
    running = start_app(tmp_path / "home", ORKAS_MIRROR_HOST="127.0.0.1", ORKAS_MIRROR_PORT="0")
    yield running
    running.stop()


def test_pair_list_and_revoke_a_phone(browser: Browser, phone_app: App) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page: Page = context.new_page()
    page.goto(phone_app.url)
    page.wait_for_selector("body[data-ready=true]")
    page.click("#settings-button")
    page.locator("#settings nav.settings-menu").get_by_role("button", name="Phone").click()
    section = page.locator("#settings section.phone")
    switch = section.locator("input[name=mirror]")
    expect(switch).not_to_be_checked(timeout=TIMEOUT)  # off by default
    switch.check()
    expect(section.locator("code.fingerprint")).to_contain_text("sha256:", timeout=TIMEOUT)
    section.get_by_role("button", name="Pair a phone").click()
    expect(section.locator("img.qr")).to_be_visible(timeout=TIMEOUT)
    # The fingerprint wraps: the dialog keeps its width, and its Close button is all there at 1280×800.
    assert page.evaluate("(d) => d.scrollWidth <= d.clientWidth", page.locator("#settings").element_handle())
    close = page.locator("#settings button.close").bounding_box()
    shown = page.locator("#settings").bounding_box()
    assert close and shown and close["x"] + close["width"] <= shown["x"] + shown["width"], (close, shown)
    code = section.locator("code.pair-code").inner_text()
    mirror = section.locator("code.path").inner_text()
    assert mirror.startswith("https://127.0.0.1:")
    pairing = httpx.get(f"{phone_app.base}/api/mirror", headers={"X-Orkas-Token": phone_app.token}).json()
    assert pairing["enabled"] and pairing["url"] == mirror
    assert json.loads((phone_app.home / "settings.json").read_text())["preferences"]["mirror"] is True

    tls = ssl.create_default_context(cafile=str(phone_app.home / "mirror" / "mirror-cert.pem"))
    with httpx.Client(verify=tls, timeout=10) as phone:
        paired = phone.post(f"{mirror}/mirror/api/v1/pair", json={"code": code, "device_name": "Test phone"}).json()
        token = paired["device_token"]
        assert phone.get(
            f"{mirror}/mirror/api/v1/conversations", headers={"Authorization": f"Bearer {token}"}
        ).is_success
        # The open section shows the new phone by itself (the used code and "No phone is paired." stayed until
        # Settings was opened again), and the code is gone.
        device = section.locator("li.device", has_text="Test phone")
        expect(device).to_be_visible(timeout=TIMEOUT)
        expect(section.locator(".pair-code")).to_have_count(0)
        expect(section).not_to_contain_text("No phone is paired.")
        page.locator("#settings button.close").click()  # and opened again, of course
        page.click("#settings-button")
        page.locator("#settings nav.settings-menu").get_by_role("button", name="Phone").click()
        expect(device).to_be_visible(timeout=TIMEOUT)
        device.get_by_role("button", name="Revoke").click()
        ask = page.locator("dialog.ask[open]")  # asked first, not one click
        expect(ask).to_contain_text("Test phone will be signed out")
        ask.get_by_role("button", name="Cancel").click()
        expect(device).to_be_visible()
        kept = phone.get(f"{mirror}/mirror/api/v1/conversations", headers={"Authorization": f"Bearer {token}"})
        assert kept.is_success  # cancelled: still paired
        device.get_by_role("button", name="Revoke").click()
        answer_dialog(page)
        expect(section.locator("li.device")).to_have_count(0, timeout=TIMEOUT)
        refused = phone.get(f"{mirror}/mirror/api/v1/conversations", headers={"Authorization": f"Bearer {token}"})
        assert refused.status_code == 401
    context.close()

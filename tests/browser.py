"""Debian's chromium driven by Playwright, for every test that needs a real browser (the window's pages, a sign-in
page). Playwright never downloads a browser here."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.display import CHROMIUM_FLAGS


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("chromium is not installed: run scripts/setup.sh (it installs Debian's chromium)")
    return found


@pytest.fixture(scope="module")  # not longer: Playwright's sync loop must be gone before async tests run
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS, headless=True)
        yield launched
        launched.close()

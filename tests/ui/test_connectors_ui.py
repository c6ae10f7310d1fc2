"""Settings → Connectors in the real browser against `orkas serve`: a real MCP server added with the form (its
exact command shown and confirmed first; cancelling saves nothing), its status and tools measured with
"Check now", secret values never shown, a server that cannot start showing its error, turned off, removed,
and a Claude Desktop file read into entries."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.ui.conftest import App, answer_dialog, start_app

TIMEOUT = 15_000
SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_server.py"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    (tmp_path / "person").mkdir()
    running = start_app(tmp_path / "data", HOME=str(tmp_path / "person"))
    yield running
    running.stop()


def section(page: Page) -> object:
    page.click("#settings-button")
    page.locator("#settings nav.settings-menu").get_by_role("button", name="Connectors").click()
    return page.locator("#settings section.connectors")


def saved(app: App) -> dict[str, dict[str, object]]:
    path = app.home / "connectors.json"
    return {c["id"]: c for c in json.loads(path.read_text())["connectors"]} if path.exists() else {}


def test_the_connectors_screen(page: Page, app: App) -> None:
    connectors = section(page)
    expect(connectors.locator(".connector-list")).to_contain_text("No connectors yet.", timeout=TIMEOUT)
    form = connectors.locator("form.connector-form")
    form.get_by_label("Name", exact=True).fill("tester")
    form.locator("select[name=kind]").select_option("local")
    command = f"{sys.executable} {SERVER}"
    form.get_by_label("Command", exact=True).fill(command)
    form.get_by_label("Environment (NAME=VALUE, one per line)").fill("TOKEN=ui-secret-77")

    form.get_by_role("button", name="Add").click()  # the exact command, then cancel: nothing saved
    dialog = page.locator("dialog.ask[open]")
    expect(dialog).to_contain_text(command, timeout=TIMEOUT)
    expect(dialog).to_contain_text("with your permissions")
    dialog.get_by_role("button", name="Cancel").click()
    assert saved(app) == {}

    form.get_by_role("button", name="Add").click()
    dialog = page.locator("dialog.ask[open]")
    expect(dialog).to_contain_text("It runs confined: its network, a private home, and no folder of yours")
    expect(
        dialog.get_by_label(re.compile("Run it unconfined instead"))
    ).not_to_be_checked()  # a choice, never the default
    answer_dialog(page)
    item = page.locator('#settings section.connectors li.connector[data-connector="custom-tester"]')
    expect(item).to_be_visible(timeout=TIMEOUT)
    expect(item.locator(".secrets")).to_have_text("TOKEN=••••")
    expect(item.locator(".confinement")).to_have_text("confined")  # new local servers run in the sandbox
    assert saved(app)["custom-tester"]["confined"] is True
    assert "ui-secret-77" not in page.content() and saved(app)["custom-tester"]["env"] == ["TOKEN"]
    item.get_by_role("button", name="Check now").click()
    expect(item.locator(".connector-tools")).to_contain_text(
        "echo (read-only, stays on this computer: runs without asking) — Say the text back.", timeout=TIMEOUT
    )
    expect(item.locator(".connector-tools")).to_contain_text("write_note (may send data off this computer")
    expect(item.locator(".badge")).to_have_text("connected")  # it listed its tools: it read "not connected"
    expect(page.locator("#settings section.connectors")).not_to_contain_text("mcp_call")  # words for people

    item.get_by_role("button", name="Turn off").click()
    expect(
        page.locator('li.connector[data-connector="custom-tester"]').get_by_role("button", name="Turn on")
    ).to_be_visible(timeout=TIMEOUT)
    assert saved(app)["custom-tester"]["enabled"] is False

    # a server that cannot start says why
    form = page.locator("#settings section.connectors form.connector-form")
    form.get_by_label("Name", exact=True).fill("broken")
    form.locator("select[name=kind]").select_option("local")
    form.get_by_label("Command", exact=True).fill("/no/such/mcp-server")
    form.get_by_role("button", name="Add").click()
    answer_dialog(page)
    broken = page.locator('#settings section.connectors li.connector[data-connector="custom-broken"]')
    broken.get_by_role("button", name="Check now").click()
    expect(page.locator("#settings .dialog-toasts .toast").last).to_contain_text("No such file", timeout=TIMEOUT)

    # removed, after a confirmation
    tester = page.locator('#settings section.connectors li.connector[data-connector="custom-tester"]')
    tester.get_by_role("button", name="Remove").click()
    answer_dialog(page)
    expect(page.locator('li.connector[data-connector="custom-tester"]')).to_have_count(0, timeout=TIMEOUT)
    assert "custom-tester" not in saved(app)

    # a Claude Desktop file, read into entries to add one by one
    text = json.dumps({"mcpServers": {"remote-one": {"url": "https://mcp.example.org/mcp"}, "odd": {"x": 1}}})
    importer = page.locator("#settings section.connectors form.connector-import")
    importer.locator("textarea").fill(text)
    importer.get_by_role("button", name="Read").click()
    expect(importer.locator(".import-entries")).to_contain_text("neither a command nor a url", timeout=TIMEOUT)
    importer.locator("li.import-entry", has_text="remote-one").get_by_role("button", name="Add").click()
    expect(page.locator('li.connector[data-connector="custom-remote-one"]')).to_be_visible(timeout=TIMEOUT)


def test_a_well_known_server_fills_the_form_and_is_confirmed_like_any_command(page: Page, app: App) -> None:
    connectors = section(page)
    form = connectors.locator("form.connector-form")
    form.locator(".connector-directory").get_by_role("button", name="fetch").click()
    expect(form.get_by_label("Command", exact=True)).to_have_value("uvx mcp-server-fetch", timeout=TIMEOUT)
    expect(form.get_by_label("Name", exact=True)).to_have_value("fetch")
    form.get_by_role("button", name="Add").click()  # the exact command first, as for any local command
    dialog = page.locator("dialog.ask[open]")
    expect(dialog).to_contain_text("uvx mcp-server-fetch", timeout=TIMEOUT)
    dialog.get_by_role("button", name="Cancel").click()
    assert saved(app) == {}
    form.locator(".connector-directory").get_by_role("button", name="github").click()
    expect(form.locator("select[name=kind]")).to_have_value("remote")
    expect(form.get_by_label("URL", exact=True)).to_have_value("https://api.githubcopilot.com/mcp/")


def test_a_hosted_server_signs_in_from_settings_and_asks_again_when_revoked(page: Page, app: App) -> None:
    """A server that signs in with OAuth (tests/fixtures/oauth_mcp_server.py, the SDK's own auth pieces): added
    with the box ticked, its page opens (a tab here; the system browser in the window), the person logs in, the
    row says signed in with its tool; revoked at the vendor, "Check now" turns it to "Sign in again"; signed out."""
    from tests.e2e.test_mcp_oauth import PASSWORD, vendor

    with vendor() as server:
        connectors = section(page)
        form = connectors.locator("form.connector-form")
        form.get_by_label("Name", exact=True).fill("vendor")
        form.get_by_label("URL", exact=True).fill(server.url)
        form.get_by_label("Signs in with its own page (OAuth)").check()
        with page.context.expect_page() as opened:
            form.get_by_role("button", name="Add").click()
        item = connectors.locator('li.connector[data-connector="custom-vendor"]')
        expect(item.locator(".signin-wait")).to_contain_text("Finish signing in", timeout=TIMEOUT)
        login = opened.value
        login.get_by_label("User").fill("ana")
        login.get_by_label("Password").fill(PASSWORD)
        login.get_by_role("button", name="Sign in").click()
        expect(login.locator("body")).to_contain_text("Signed in to vendor", timeout=TIMEOUT)
        login.close()
        expect(item.locator(".signin-wait")).to_have_count(0, timeout=TIMEOUT)
        expect(item.get_by_role("button", name="Sign out")).to_be_visible()
        expect(item.get_by_role("button", name="Sign in")).to_have_count(0)
        assert saved(app)["custom-vendor"]["oauth"] is True
        assert "access_token" not in (app.home / "connectors.json").read_text()
        item.get_by_role("button", name="Check now").click()
        expect(item.locator(".connector-tools")).to_contain_text("whoami", timeout=TIMEOUT)

        server.revoke()
        item.get_by_role("button", name="Check now").click()
        again = connectors.locator('li.connector[data-connector="custom-vendor"]')
        expect(again.get_by_role("button", name="Sign in again")).to_be_visible(timeout=TIMEOUT)
        expect(again.locator(".badge")).to_have_text("sign-in needed")
        expect(again.locator(".error-text").first).to_contain_text("sign in again")

        again.get_by_role("button", name="Sign out").click()
        out = connectors.locator('li.connector[data-connector="custom-vendor"]')
        expect(out.get_by_role("button", name="Sign in", exact=True)).to_be_visible(timeout=TIMEOUT)
        expect(out.locator(".badge")).to_have_text("sign-in needed")  # not "connected": it said so at once

        # A local server with a folder that is not there: said before "Run … on this computer?", in the dialog.
        form.locator("select[name=kind]").select_option("local")
        form.get_by_label("Name", exact=True).fill("ghost")
        form.get_by_label("Command", exact=True).fill(f"{sys.executable} {SERVER}")
        form.get_by_label(re.compile("^Folders it may use")).fill("/no/such/folder")
        form.get_by_role("button", name="Add").click()
        expect(page.locator("#settings .dialog-toasts .toast").last).to_contain_text(
            "'/no/such/folder' is not a folder", timeout=TIMEOUT
        )
        expect(page.locator("dialog.ask[open]")).to_have_count(0)
        assert "custom-ghost" not in saved(app)

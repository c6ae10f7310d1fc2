"""Settings in sections with a side menu, and the person's "always allow" rules viewed and removed."""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from tests.ui.conftest import App

TIMEOUT = 15_000


def test_the_menu_leads_to_each_section_and_a_rule_can_be_taken_back(page: Page, app: App) -> None:
    rules = {
        "rules": [
            {"workspace": "/work/site", "key": "bash:make deploy"},
            {"workspace": "/work/site", "key": "write_file"},
        ]
    }
    (app.home / "permission_rules.json").write_text(json.dumps(rules))
    page.click("#settings-button")
    menu = page.locator("#settings nav.settings-menu")
    expect(menu).to_be_visible(timeout=TIMEOUT)
    expect(menu.get_by_role("button")).to_have_text(
        [
            "Providers",
            "Models",
            "Agents",
            "Skills",
            "Connectors",
            "Knowledge",
            "Memory",
            "Learning",
            "Permissions and rules",
            "Appearance",
            "Language",
            "Usage",
            "Phone",
            "About",
        ]
    )
    menu.get_by_role("button", name="Permissions and rules").click()
    section = page.locator("#settings section.rules")
    expect(section).to_be_in_viewport()
    expect(section.locator("h5")).to_have_text("/work/site")
    section.locator('li.rule[data-key="bash:make deploy"]').get_by_role("button", name="Remove").click()
    expect(page.locator("#settings section.rules li.rule")).to_have_count(1, timeout=TIMEOUT)
    left = json.loads((app.home / "permission_rules.json").read_text())["rules"]
    assert left == [{"workspace": "/work/site", "key": "write_file"}]


def test_a_provider_set_by_the_environment_is_listed_not_no_provider_yet(page: Page, app: App) -> None:
    page.click("#settings-button")
    section = page.locator("#settings section.providers")
    row = section.locator('.provider.environment[data-provider="anthropic"]')
    expect(row).to_be_visible(timeout=TIMEOUT)
    expect(row).to_contain_text("ANTHROPIC_API_KEY")
    expect(section).not_to_contain_text("No provider yet")
    assert "sk-ant-test-key" not in section.inner_text()  # the variable's name, never its value

"""Settings in sections with a side menu, and the person's "always allow" rules viewed and removed."""

from __future__ import annotations

import json
import time

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
            "Instructions",
            "Learning",
            "Permissions and rules",
            "Appearance",
            "Language",
            "Usage",
            "Schedules",
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


def _below_the_menu(page: Page, section: str) -> bool:
    """The section's title is in view, not under the sticky head or menu (its top below the menu's bottom, or the
    menu beside it)."""
    return bool(
        page.evaluate(
            """(name) => {
              const title = document.querySelector(`#settings section.${name} h3`).getBoundingClientRect();
              const menu = document.querySelector("#settings nav.settings-menu").getBoundingClientRect();
              const head = document.querySelector("#settings .settings-head");
              const beside = menu.right <= title.left;
              // and neither the menu nor a section ever covers the dialog's own head (its title, Close)
              const own = head.querySelector("h2").getBoundingClientRect();
              const shown = head.contains(document.elementFromPoint(own.left + 4, own.top + own.height / 2));
              return shown && title.top >= head.getBoundingClientRect().bottom && title.bottom <= innerHeight
                && (beside || title.top >= menu.bottom);
            }""",
            section,
        )
    )


def test_settings_sections_show_their_title_mark_where_you_are_and_stay_put_on_a_redraw(page: Page, app: App) -> None:
    rules = {"rules": [{"workspace": "/w", "key": "bash:make"}, {"workspace": "/w", "key": "write_file"}]}
    (app.home / "permission_rules.json").write_text(json.dumps(rules))
    for width in (1200, 860):  # the menu beside the sections, and above them (sticky)
        page.set_viewport_size({"width": width, "height": 800})
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        page.click("#settings-button")
        menu = page.locator("#settings nav.settings-menu")
        menu.get_by_role("button", name="Usage").click()
        expect(menu.get_by_role("button", name="Usage")).to_have_attribute("aria-current", "true", timeout=TIMEOUT)
        assert _below_the_menu(page, "usage"), width
        page.keyboard.press("Escape")
    page.click("#settings-button")
    menu = page.locator("#settings nav.settings-menu")
    menu.get_by_role("button", name="Permissions and rules").click()
    section = page.locator("#settings section.rules")
    section.locator('li.rule[data-key="bash:make"]').get_by_role("button", name="Remove").click()  # a redraw
    expect(section.locator("li.rule")).to_have_count(1, timeout=TIMEOUT)
    expect(page.locator("#settings section.rules")).to_be_in_viewport()  # it jumped back to Providers
    expect(menu.get_by_role("button", name="Permissions and rules")).to_have_attribute("aria-current", "true")


def test_fetching_models_that_fails_says_why_in_the_form(page: Page, app: App) -> None:
    page.click("#settings-button")
    form = page.locator("#settings form.add-provider")
    form.locator("input[name=name]").fill("local")
    form.locator("select[name=kind]").select_option("openai-compatible")
    form.locator("input[name=base_url]").fill("http://127.0.0.1:9/v1")  # nothing listens there
    form.get_by_role("button", name="Fetch models").click()
    expect(form.locator(".test-result.failed")).to_be_visible(timeout=TIMEOUT)
    expect(form).not_to_contain_text("Testing")


def marked(page: Page) -> str:
    """The section the side menu marks, once the scroll the last action started has been drawn (two frames: a
    scroll's own event comes with the next one)."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    return page.locator("#settings nav.settings-menu [aria-current]").inner_text()


def test_the_menu_marks_the_section_shown_or_chosen(page: Page, app: App) -> None:
    settings = json.loads((app.home / "settings.json").read_text())
    (app.home / "settings.json").write_text(json.dumps({**settings, "budgets": {"per_day": 0.5}}))
    spent = {
        "ts": time.time(),
        "day": time.strftime("%Y-%m-%d"),
        "conversation": "c1",
        "provider": "work",
        "model": "claude-opus-4-1",
        "input": 1000,
        "output": 500,
        "cache_read": 0,
        "cache_write": 0,
        "cost": 1.0,
    }
    (app.home / "usage.jsonl").write_text(json.dumps(spent) + "\n")
    page.click("#settings-button")
    menu = page.locator("#settings nav.settings-menu")
    expect(page.locator("#settings section.providers")).to_be_in_viewport(timeout=TIMEOUT)
    assert marked(page) == "Providers"  # what shows at the top when it opens
    for name in ("Language", "Phone", "About", "Appearance"):  # a short section, and ones the end keeps low
        menu.get_by_role("button", name=name).click()
        assert marked(page) == name
    page.keyboard.press("Escape")
    page.fill("textarea.input", "one more question")
    page.keyboard.press("Enter")
    page.locator(".marker.error button.open-settings").click(timeout=TIMEOUT)
    expect(page.locator("#settings .usage-limits input[name=per_day]")).to_be_focused(timeout=TIMEOUT)
    assert marked(page) == "Usage"


def test_tabbing_into_the_next_section_moves_the_menus_mark(page: Page, app: App) -> None:
    page.click("#settings-button")
    menu = page.locator("#settings nav.settings-menu")
    menu.get_by_role("button", name="Language").click()
    assert marked(page) == "Language"
    names = page.evaluate(
        "() => [...document.querySelectorAll('#settings .settings-body > section h3')].map((h) => h.textContent)"
    )
    after = names[names.index("Language") + 1]
    for _ in range(30):  # through Language's own fields, into the next section's first one
        page.keyboard.press("Tab")
        inside = page.evaluate("() => document.activeElement.closest('section')?.querySelector('h3')?.textContent")
        if inside == after:
            break
    assert inside == after
    assert marked(page) == after  # it stayed on Language: a keyboard user read the wrong section's name

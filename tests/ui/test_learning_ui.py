"""Settings → Learning in the real browser: an agent's memo, its learned skill with its health, its changes
with where they came from, one-click undo, and the switch that stops learning."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from orkas.adapter.conversations import ConversationStore
from orkas.adapter.evolution import Evolution
from orkas.adapter.signals import SignalLog
from orkas.engine.evolution.signals import RunSignals
from tests.ui.conftest import App, start_app

TIMEOUT = 15_000


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    data = tmp_path / "data"

    async def never(*_args: object) -> tuple[str, int]:
        raise AssertionError("no reflection call here")

    chat = ConversationStore(data).create(title="March totals").id  # where the lesson came from
    evolution = Evolution(data, SignalLog(data / "signals"), lambda *_: [], never, lambda: [])
    evolution.skills("commander", [chat]).create(
        "monthly-totals", "Use WHEN totals are asked for.", "1. Group by month."
    )
    evolution.memo("commander", [chat]).write("strategies", "- WHEN totals are asked for THEN group by month.")
    log = SignalLog(data / "signals")
    for _ in range(6):
        log.record(
            RunSignals(
                agent="commander",
                conversation="c1",
                skills_advertised=["monthly-totals"],
                skills_read=["monthly-totals"],
            )
        )
    running = start_app(data, HOME=str(tmp_path))
    yield running
    running.stop()


def test_the_learning_screen_shows_what_was_learned_and_undoes_it(page: Page, app: App) -> None:
    page.click("#settings-button")
    page.locator("#settings nav.settings-menu").get_by_role("button", name="Learning").click()
    block = page.locator('#settings section.learning .learning-agent[data-agent="commander"]')
    expect(block.locator("pre.memo.strategies")).to_contain_text("group by month", timeout=TIMEOUT)
    skill = block.locator('li.learned-skill[data-skill="monthly-totals"]')
    expect(skill.locator(".tag.health")).to_have_text("healthy")
    expect(skill.locator("svg.trend polyline")).to_have_count(3)
    assert "read 100%" in (skill.locator("svg.trend").get_attribute("aria-label") or "")
    changes = block.locator("ul.learning-history li.change")
    expect(changes).to_have_count(2)
    expect(changes.nth(1)).to_contain_text("created skill monthly-totals")
    expect(changes.nth(1)).to_contain_text("from 1 conversations:")
    changes.nth(1).get_by_role("button", name="Undo").click()
    expect(page.locator('#settings section.learning li.learned-skill[data-skill="monthly-totals"]')).to_have_count(
        0, timeout=TIMEOUT
    )
    assert not (app.home / "learned" / "commander" / "skills" / "monthly-totals").exists()
    page.locator("#settings section.learning input[name=learning_threshold]").fill("1.5")
    page.locator("#settings section.learning input[name=learning_threshold]").dispatch_event("change")
    page.wait_for_timeout(300)
    page.locator("#settings section.learning input[name=learning]").uncheck()
    page.wait_for_timeout(500)
    preferences = json.loads((app.home / "settings.json").read_text())["preferences"]
    assert preferences["learning"] is False and preferences["learning_threshold"] == 1.5
    link = page.locator("#settings section.learning ul.learning-history li.change button[data-conversation]").first
    chat = link.get_attribute("data-conversation")
    link.click()  # where the lesson came from: the conversation opens
    expect(page.locator("#settings")).not_to_be_visible()
    expect(page.locator(f'li.chat.active[data-id="{chat}"]')).to_be_visible(timeout=TIMEOUT)

"""Settings → Learning in the real browser: an agent's memo, its learned skill with its health, its changes
with where they came from, one-click undo, and the switch that stops learning."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

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

    evolution = Evolution(data, SignalLog(data / "signals"), lambda *_: [], never, lambda: [])
    evolution.skills("commander", ["c1"]).create(
        "monthly-totals", "Use WHEN totals are asked for.", "1. Group by month."
    )
    evolution.memo("commander", ["c1"]).write("strategies", "- WHEN totals are asked for THEN group by month.")
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
    expect(changes.nth(1)).to_contain_text("from 1 conversations")
    changes.nth(1).get_by_role("button", name="Undo").click()
    expect(page.locator('#settings section.learning li.learned-skill[data-skill="monthly-totals"]')).to_have_count(
        0, timeout=TIMEOUT
    )
    assert not (app.home / "learned" / "commander" / "skills" / "monthly-totals").exists()
    page.locator("#settings section.learning input[name=learning]").uncheck()
    page.wait_for_timeout(500)
    assert json.loads((app.home / "settings.json").read_text())["preferences"]["learning"] is False

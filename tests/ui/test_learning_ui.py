"""Settings → Learning in the real browser: a named agent's memo, its learned skill with its health, its changes
with where they came from, one-click undo, what waits for the person (a proposal accepted), and the switch —
off until the person turns it on."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from orkas.adapter.conversations.store import ConversationStore
from orkas.adapter.learning.evolution import Evolution
from orkas.adapter.learning.signals import SignalLog
from orkas.engine.evolution.signals import RunSignals
from tests.ui.conftest import App, start_app

TIMEOUT_S = 15


def saved(app: App, name: str, value: object) -> None:
    """Wait until the app has written a preference (a busy machine takes longer; no fixed wait)."""
    deadline = time.monotonic() + TIMEOUT_S
    while json.loads((app.home / "settings.json").read_text())["preferences"].get(name) != value:
        assert time.monotonic() < deadline, f"{name} was never saved as {value!r}"
        time.sleep(0.05)


TIMEOUT = 15_000


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    data = tmp_path / "data"

    async def never(*_args: object) -> tuple[str, int]:
        raise AssertionError("no reflection call here")

    chat = ConversationStore(data).create(title="March totals").id  # where the lesson came from
    folder = data / "agents" / "analyst"
    folder.mkdir(parents=True)
    (folder / "AGENT.md").write_text("---\nname: analyst\ndescription: totals\n---\nYou total things.\n")
    evolution = Evolution(data, SignalLog(data / "signals"), lambda *_: [], never, lambda: ["analyst"])
    evolution.skills("analyst", [chat]).create("monthly-totals", "Use WHEN totals are asked for.", "1. Group by month.")
    evolution.memo("analyst", [chat]).write("strategies", "- WHEN totals are asked for THEN group by month.")
    held = [{"kind": "skill", "name": "quarterly", "before": None, "after": "---\nname: quarterly\n---\n1. By quarter.",
             "why": "it read outside text (the output of read_file)"}]  # fmt: skip
    evolution._propose("analyst", held, ["the output of read_file"], [chat], "user_correction")
    log = SignalLog(data / "signals")
    for _ in range(6):
        log.record(
            RunSignals(
                agent="analyst",
                conversation="c1",
                skills_advertised=["monthly-totals"],
                skills_read=["monthly-totals"],
            )
        )
    log.record(RunSignals(agent="analyst", conversation="c1", correction=("en", "instead")))  # since its last look
    running = start_app(data, HOME=str(tmp_path))
    yield running
    running.stop()


def test_the_learning_screen_shows_what_was_learned_and_undoes_it(page: Page, app: App) -> None:
    page.click("#settings-button")
    page.locator("#settings nav.settings-menu").get_by_role("button", name="Learning").click()
    section = page.locator("#settings section.learning")
    expect(section.locator("input[name=learning]")).not_to_be_checked(timeout=TIMEOUT)  # off by default
    proposal = section.locator(".proposals .proposal")
    expect(proposal).to_contain_text("analyst wants to keep", timeout=TIMEOUT)
    expect(proposal).to_contain_text("it read outside text")
    proposal.get_by_role("button", name="Accept").click()
    expect(section.locator(".proposals")).to_have_count(0, timeout=TIMEOUT)
    assert (app.home / "learned" / "analyst" / "skills" / "quarterly").is_dir()
    block = page.locator('#settings section.learning .learning-agent[data-agent="analyst"]')
    expect(block.locator("pre.memo.strategies")).to_contain_text("group by month", timeout=TIMEOUT)
    expect(block.locator("p.hint").first).to_contain_text("to learn from")  # not "trigger 0.90"
    assert "trigger" not in block.locator("p.hint").first.inner_text()
    expect(block.locator("p.why")).to_contain_text("you corrected it: “instead”")  # not user_correction (…)
    skill = block.locator('li.learned-skill[data-skill="monthly-totals"]')
    expect(skill.locator(".tag.health")).to_have_text("healthy")
    expect(skill.locator("svg.trend polyline")).to_have_count(3)
    assert "read 100%" in (skill.locator("svg.trend").get_attribute("aria-label") or "")
    changes = block.locator("ul.learning-history li.change")
    expect(changes).to_have_count(3)  # the accepted proposal is a change like any other, with undo
    expect(changes.nth(0)).to_contain_text("quarterly")
    expect(changes.nth(2)).to_contain_text("created skill monthly-totals")
    expect(changes.nth(2)).to_contain_text("from 1 conversations:")
    changes.nth(2).get_by_role("button", name="Undo").click()
    expect(page.locator('#settings section.learning li.learned-skill[data-skill="monthly-totals"]')).to_have_count(
        0, timeout=TIMEOUT
    )
    assert not (app.home / "learned" / "analyst" / "skills" / "monthly-totals").exists()
    page.locator("#settings section.learning input[name=learning_threshold]").fill("1.5")
    page.locator("#settings section.learning input[name=learning_threshold]").dispatch_event("change")
    saved(app, "learning_threshold", 1.5)
    page.locator("#settings section.learning input[name=learning]").check()
    saved(app, "learning", True)
    link = page.locator("#settings section.learning ul.learning-history li.change button[data-conversation]").first
    chat = link.get_attribute("data-conversation")
    link.click()  # where the lesson came from: the conversation opens
    expect(page.locator("#settings")).not_to_be_visible()
    expect(page.locator(f'li.chat.active[data-id="{chat}"]')).to_be_visible(timeout=TIMEOUT)

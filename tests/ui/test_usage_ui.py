"""Settings → Usage in the real browser: a bar per day over 30 days and a row per model, from the real
usage ledger file the runs write."""

from __future__ import annotations

import json
import time

from playwright.sync_api import Page, expect

from tests.ui.conftest import App

TIMEOUT = 15_000


def record(days_ago: int, model: str, cost: float | None, tokens: int) -> dict[str, object]:
    when = time.time() - days_ago * 86400
    return {
        "ts": when,
        "day": time.strftime("%Y-%m-%d", time.localtime(when)),
        "conversation": "c1",
        "provider": "work",
        "model": model,
        "input": tokens,
        "output": tokens // 2,
        "cache_read": 0,
        "cache_write": 0,
        "cost": cost,
    }


def test_usage_per_day_and_per_model(page: Page, app: App) -> None:
    records = [
        record(0, "claude-opus-4-1", 0.50, 1000),
        record(0, "claude-haiku-4-5", 0.01, 400),
        record(3, "claude-opus-4-1", 1.25, 3000),
        record(45, "claude-opus-4-1", 9.0, 9000),  # older than the window: not counted
        record(1, "llama3", None, 800),  # a local model: tokens, no price
    ]
    (app.home / "usage.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records) + '{"torn')
    page.click("#settings-button")
    page.locator("#settings nav.settings-menu").get_by_role("button", name="Usage").click()
    section = page.locator("#settings section.usage")
    expect(section).to_be_in_viewport(timeout=TIMEOUT)
    expect(section.locator(".usage-total")).to_have_text("Last 30 days: $1.76 · 7800 tokens · 4 calls")
    bars = section.locator("svg.usage-chart rect.usage-day")
    expect(bars).to_have_count(30)
    today = time.strftime("%Y-%m-%d")
    assert bars.last.get_attribute("data-day") == today
    heights = [float(bars.nth(i).get_attribute("height") or 0) for i in range(30)]
    assert heights[26] == max(heights) and heights[29] > 0 and heights[28] == 0  # cost: the local model is free
    rows = section.locator("table.usage-models tr[data-model]")
    expect(rows).to_have_count(3)
    assert [rows.nth(i).get_attribute("data-model") for i in range(3)] == [
        "work/claude-opus-4-1",
        "work/claude-haiku-4-5",
        "work/llama3",
    ]
    expect(rows.nth(0).locator("td")).to_have_text(["work/claude-opus-4-1", "2", "6000", "$1.75"])
    expect(rows.nth(2).locator("td").last).to_have_text("—")  # unpriced, not "$0"
    assert "busiest" in (section.locator("svg.usage-chart").get_attribute("aria-label") or "")

"""Settings → Usage in the real browser: a bar per day over 30 days and a row per model, from the real
usage ledger file the runs write."""

from __future__ import annotations

import json
import time

from playwright.sync_api import Locator, Page, expect

from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000


def usage_limits(page: Page) -> Locator:
    """Settings opened at Usage: its spending-limits form."""
    page.click("#settings-button")
    page.locator("#settings nav.settings-menu").get_by_role("button", name="Usage").click()
    return page.locator("#settings .usage-limits")


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


def test_a_spending_limit_set_in_settings_stops_a_run_and_raising_it_there_lets_the_retry_through(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    """The budget was settable only from `orkas budget`; the error said "raise it in Settings". Now: a limit set in
    Settings → Usage stops the next run before any model call, the error's button opens that very form, and a
    higher limit there lets Retry through — the same limit `orkas run` keeps to (one settings file)."""
    from tests.fakes import anthropic as wire

    stopped = record(0, "claude-opus-4-1", 0.25, 100) | {"partial": True}  # a call stopped before its final count
    (app.home / "usage.jsonl").write_text(
        json.dumps(record(0, "claude-opus-4-1", 0.75, 1000)) + "\n" + json.dumps(stopped) + "\n"
    )
    anthropic_server.script(wire.reply_text("Within budget now."))
    limits = usage_limits(page)
    expect(limits.locator(".limits-status")).to_have_text("Spent today: at least $1.00", timeout=TIMEOUT)
    expect(limits.locator(".limits-month")).to_have_text("Spent this month: at least $1.00")  # as today's
    limits.locator("input[name=per_day]").fill("0.5")
    limits.locator("button.save-limits").click()
    expect(limits.locator(".limits-result")).to_contain_text("Saved", timeout=TIMEOUT)
    expect(limits.locator(".limits-status")).to_have_text("Spent today: at least $1.00")  # still said beside it
    assert json.loads((app.home / "settings.json").read_text())["budgets"]["per_day"] == 0.5
    page.keyboard.press("Escape")

    page.fill("textarea.input", "one more question")
    page.keyboard.press("Enter")
    alert = page.locator(".msg [role=alert], .notice[role=alert], [role=alert].error").last
    # Which limit, and what to do, in the person's words (the sentence with `orkas budget …` is under Details).
    expect(alert.locator(".error-words")).to_have_text(
        "Today's spending limit is reached. Raise it in Settings → Usage, or go on tomorrow.", timeout=TIMEOUT
    )
    assert not anthropic_server.requests  # stopped before any model call
    alert.locator("button.open-settings").click()
    limits = page.locator("#settings .usage-limits")
    expect(limits.locator("input[name=per_day]")).to_be_focused(timeout=TIMEOUT)
    limits.locator("input[name=per_day]").fill("5")
    limits.locator("button.save-limits").click()
    expect(limits.locator(".limits-result")).to_contain_text("Saved", timeout=TIMEOUT)
    page.keyboard.press("Escape")
    alert.locator("button.retry").click()
    expect(page.locator(".msg.assistant .markdown").last).to_have_text("Within budget now.", timeout=TIMEOUT)


def test_a_bad_limit_is_refused_with_a_clear_message(page: Page, app: App) -> None:
    limits = usage_limits(page)
    limits.locator("input[name=per_conversation]").fill("-3")
    limits.locator("button.save-limits").click()
    expect(limits.locator(".limits-result.error")).to_contain_text("a spending limit is from $0", timeout=TIMEOUT)
    saved = app.home / "settings.json"
    assert not saved.exists() or json.loads(saved.read_text()).get("budgets", {}).get("per_conversation") is None


def test_the_limits_in_the_window_are_the_ones_orkas_budget_shows_and_a_bad_one_loses_nothing(
    page: Page, app: App
) -> None:
    """Per day, per month and per conversation, as `orkas budget` has them: set in the window, the CLI shows them;
    set with the CLI, the window shows them. A typed amount that is not one ("1e": a number input read it as empty,
    no limit, without a word) is refused by name, and nothing typed or set before is lost."""
    from tests.e2e.test_spending_limits import budget

    def open_usage() -> Locator:
        limits = usage_limits(page)
        expect(limits.locator(".limits-status")).to_contain_text("Spent today", timeout=TIMEOUT)
        return limits

    limits = open_usage()
    limits.locator("input[name=per_day]").fill("2")
    limits.locator("input[name=per_month]").fill("30")
    limits.locator("input[name=per_conversation]").fill("0.5")
    limits.locator("button.save-limits").click()
    expect(limits.locator(".limits-result")).to_contain_text("Saved", timeout=TIMEOUT)
    assert budget(app.home).stdout.strip() == "per day: $2.00; per month: $30.00; per conversation: $0.50"

    assert budget(app.home, "--month", "45", "--day", "0").returncode == 0
    page.keyboard.press("Escape")
    limits = open_usage()
    expect(limits.locator("input[name=per_month]")).to_have_value("45")
    expect(limits.locator("input[name=per_day]")).to_have_value("")  # 0: no limit
    expect(limits.locator("input[name=per_conversation]")).to_have_value("0.5")

    limits.locator("input[name=per_day]").fill("3")
    month = limits.locator("input[name=per_month]")
    month.fill("")
    month.press_sequentially("1e")
    limits.locator("button.save-limits").click()
    expect(limits.locator(".limits-result.error")).to_have_text(
        "per month: a spending limit is an amount in US dollars, not '1e'", timeout=TIMEOUT
    )
    expect(month).to_have_attribute("aria-invalid", "true")
    expect(month).to_be_focused()
    expect(month).to_have_value("1e")
    expect(limits.locator("input[name=per_day]")).to_have_value("3")  # what was typed stays
    assert budget(app.home).stdout.strip() == "per day: no limit; per month: $45.00; per conversation: $0.50"

    month.fill("")  # empty: no limit
    limits.locator("button.save-limits").click()
    expect(limits.locator(".limits-result")).to_contain_text("Saved", timeout=TIMEOUT)
    expect(month).not_to_have_attribute("aria-invalid", "true")
    assert budget(app.home).stdout.strip() == "per day: $3.00; per month: no limit; per conversation: $0.50"


def test_a_daily_limit_below_todays_spend_says_at_once_what_it_means(page: Page, app: App) -> None:
    (app.home / "usage.jsonl").write_text(json.dumps(record(0, "claude-opus-4-1", 1.00, 1000)) + "\n")
    limits = usage_limits(page)
    expect(limits.locator(".limits-status")).to_have_text("Spent today: $1.00", timeout=TIMEOUT)
    limits.locator("input[name=per_day]").fill("0.5")
    limits.locator("button.save-limits").click()
    result = limits.locator(".limits-result")
    expect(result).to_contain_text("Saved", timeout=TIMEOUT)
    expect(result).to_contain_text(
        "Today's spending ($1.00) has already reached the daily limit ($0.5000): until tomorrow, or until you raise "
        "it, every run stops before its next model call with a spending-limit notice"
    )
    limits.locator("input[name=per_day]").fill("5")  # above what was spent: no such warning
    limits.locator("button.save-limits").click()
    expect(result).not_to_contain_text("already reached", timeout=TIMEOUT)
    expect(result).to_contain_text("Saved")


def test_a_per_conversation_limit_below_what_chats_spent_names_them_here_and_in_orkas_budget(
    page: Page, app: App
) -> None:
    import httpx

    from tests.e2e.test_spending_limits import budget

    headers = {"X-Orkas-Token": app.token, "Content-Type": "application/json"}
    made = {t: httpx.post(f"{app.base}/api/conversations", json={"title": t}, headers=headers).json()["id"]
            for t in ("Taxes", "Garden", "Old")}  # fmt: skip
    assert httpx.delete(f"{app.base}/api/conversations/{made['Old']}", headers=headers).status_code == 204
    spent = {"Taxes": 1.2, "Garden": 0.1, "Old": 2.0}  # a deleted chat is nobody's concern any more
    lines = [
        json.dumps({**record(0, "claude-opus-4-1", cost, 10), "conversation": made[t]}) for t, cost in spent.items()
    ]
    (app.home / "usage.jsonl").write_text("\n".join(lines) + "\n")
    limits = usage_limits(page)
    limits.locator("input[name=per_conversation]").fill("0.5")
    limits.locator("button.save-limits").click()
    result = limits.locator(".limits-result")
    expect(result).to_contain_text("Saved", timeout=TIMEOUT)
    expect(result).to_contain_text(
        "One chat has already spent the per-conversation limit ($0.5000): “Taxes” ($1.20). Its next message stops"
    )
    expect(result).not_to_contain_text("Garden")
    expect(result).not_to_contain_text("Old")
    shown = budget(app.home).stdout
    assert "note: 1 conversation already spent the per-conversation limit of $0.50: “Taxes” ($1.20)" in shown, shown
    assert "Old" not in shown and "Garden" not in shown
    raised = budget(app.home, "--conversation", "5")
    assert raised.stdout.strip() == "per day: no limit; per month: no limit; per conversation: $5.00", raised.stdout
    over_today = budget(app.home, "--day", "1")
    assert "note: the daily budget of $1.00 is reached ($3.30 spent today)" in over_today.stdout, over_today.stdout

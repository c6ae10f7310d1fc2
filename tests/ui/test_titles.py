"""A new chat is titled by its first words at once, then by a short model call after the first answer —
never over a title the person typed meanwhile, and a failed title call changes nothing."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer, Reply
from tests.ui.conftest import App, answer_dialog, start_app

TIMEOUT = 15_000


@pytest.fixture
def titled(browser: Browser, anthropic_server: FakeServer, tmp_path: Path) -> Iterator[tuple[App, Page]]:
    """An app that names its chats with a model call (the UI tests' own app does not), and a page of it, ready."""
    app = start_app(
        tmp_path / "home", titles=True, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url
    )
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    page = context.new_page()
    try:
        page.goto(app.url)
        page.wait_for_selector("body[data-ready=true]")
        yield app, page
    finally:
        context.close()
        app.stop()


def test_a_chat_is_named_after_its_first_answer(titled: tuple[App, Page], anthropic_server: FakeServer) -> None:
    app, page = titled
    title_reply = Reply(events=wire.events([wire.text('"Capital of France."')]), stall=0.5)
    anthropic_server.script(wire.reply_text("Paris."), title_reply)
    page.fill("textarea.input", "what is the capital of france, please?")
    page.keyboard.press("Enter")
    expect(page.locator("#chats .chat")).to_have_text("what is the capital of france, please?", timeout=TIMEOUT)
    expect(page.locator(".msg.assistant .markdown")).to_have_text("Paris.", timeout=TIMEOUT)
    expect(page.locator("#chats .chat")).to_have_text("Capital of France", timeout=TIMEOUT)  # no reload
    expect(page.locator("#title")).to_have_text("Capital of France")
    asked = anthropic_server.requests[-1].json
    assert asked["max_tokens"] == 32 and "capital of france" in asked["messages"][0]["content"][0]["text"]
    ledger = [json.loads(line) for line in (app.home / "usage.jsonl").read_text().splitlines()]
    assert len(ledger) == 2  # the title call is counted too
    # and said apart in the chat's total: the answer's cost alone did not add up to it
    assert ledger[1]["purpose"] == "title" and "purpose" not in ledger[0]
    total = page.locator("#total")
    expect(total).to_contain_text("outside answers", timeout=TIMEOUT)
    expect(total).to_have_attribute("title", re.compile("naming this chat"))
    answer = page.locator(".msg.assistant .turn-foot").inner_text()
    figures = [float(f) for f in re.findall(r"\$(\d+\.\d+)", (total.inner_text() + " " + answer))]
    assert figures[0] == pytest.approx(figures[1] + figures[2], abs=2e-4)  # the total = the title's + the answer's

    # Renamed by the person while the title call is out: their title stays.
    anthropic_server.script(wire.reply_text("Blue."), Reply(events=wire.events([wire.text("Sky")]), stall=2.0))
    page.click("#new-chat")
    page.fill("textarea.input", "why is the sky blue")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown")).to_have_text("Blue.", timeout=TIMEOUT)
    headers = {"X-Orkas-Token": app.token}
    chat = next(c for c in httpx.get(f"{app.base}/api/conversations", headers=headers).json() if "sky" in c["title"])
    httpx.patch(f"{app.base}/api/conversations/{chat['id']}", json={"title": "My sky notes"}, headers=headers)
    deadline = time.time() + 10
    while anthropic_server.remaining and time.time() < deadline:
        time.sleep(0.1)
    time.sleep(3.0)  # the stalled title answer arrives, and is refused
    assert httpx.get(f"{app.base}/api/conversations/{chat['id']}", headers=headers).json()["title"] == "My sky notes"

    # A failed title call: the first words stay, and nothing is shown as an error.
    anthropic_server.script(wire.reply_text("Fine."), wire.error(500, "api_error", "boom"))
    page.click("#new-chat")
    page.fill("textarea.input", "how are you")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown")).to_have_text("Fine.", timeout=TIMEOUT)
    deadline = time.time() + 10
    while anthropic_server.remaining and time.time() < deadline:
        time.sleep(0.1)
    expect(page.locator("#title")).to_have_text("how are you")
    expect(page.locator(".toast")).to_have_count(0)
    expect(page.locator(".marker.error")).to_have_count(0)


def test_a_long_model_title_is_cut_to_six_words_and_the_persons_own_is_kept_whole(
    titled: tuple[App, Page], anthropic_server: FakeServer
) -> None:
    _, page = titled
    long_title = "The Capital City of France and Its Long and Storied History."
    anthropic_server.script(wire.reply_text("Paris."), wire.reply_text(long_title))
    page.fill("textarea.input", "what is the capital of france")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown")).to_have_text("Paris.", timeout=TIMEOUT)
    expect(page.locator("#title")).to_have_text("The Capital City of France and", timeout=TIMEOUT)
    expect(page.locator("#chats .chat")).to_have_text("The Capital City of France and")

    page.click("#rename")  # the person's own title is theirs, however long
    answer_dialog(page, "Notes on Paris, its bridges, its cafés and the river Seine")
    expect(page.locator("#title")).to_have_text("Notes on Paris, its bridges, its cafés and the river Seine")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator("#title")).to_have_text("Notes on Paris, its bridges, its cafés and the river Seine")

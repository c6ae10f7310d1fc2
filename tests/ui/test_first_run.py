"""The first run in the real browser: with no model, the empty chat offers "Add a model" and "Use a
local model"; a preset fills in a provider's endpoint and "Fetch models" lists what it serves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.fakes.server import FakeServer, Recorded, Reply, json_reply
from tests.ui.conftest import start_app

TIMEOUT = 15_000


def models_server() -> FakeServer:
    def listing(request: Recorded) -> Reply:
        if request.method == "GET" and request.path.endswith("/models"):
            return json_reply(200, {"data": [{"id": "qwen3:8b"}, {"id": "llama3.2"}]})
        return json_reply(404, {"error": {"message": "no such path"}})

    return FakeServer("", listing).start()


def test_a_first_run_offers_a_local_model_and_it_just_works(browser: Any, tmp_path: Path) -> None:
    server = models_server()
    app = start_app(tmp_path / "home", ORKAS_LOCAL_SERVERS=f"ollama={server.url}/v1,lmstudio=http://127.0.0.1:9/v1")
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(app.url)
        page.wait_for_selector("body[data-ready=true]")
        panel = page.locator("#messages .first-run")
        expect(panel).to_contain_text("Connect a model to start", timeout=TIMEOUT)
        expect(panel).not_to_contain_text("orkas providers")  # no terminal commands for a desktop user
        panel.get_by_role("button", name="Use a local model").click()
        expect(panel.locator(".found")).to_contain_text("Using ollama: 2 models", timeout=TIMEOUT)
        expect(page.locator("#messages .first-run")).to_have_count(0, timeout=TIMEOUT)
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        # a model is configured now: the empty chat asks, once, whether to turn memory and learning on
        offer = page.locator("#messages .first-run.offer")
        expect(offer).to_contain_text("off until you turn them on", timeout=TIMEOUT)
        expect(offer).to_contain_text("Memory:")
        expect(offer).to_contain_text("Learning:")
        expect(page.locator("#messages .first-run:not(.offer)")).to_have_count(0)
        offer.locator("button[name=memory]").click()  # each its own button: nothing turns on without its click
        expect(offer.locator(".memory .offer-done")).to_have_text("Memory is on.", timeout=TIMEOUT)
        preferences = json.loads((tmp_path / "home" / "settings.json").read_text())["preferences"]
        assert preferences["memory"] is True and preferences["learning"] is False and preferences["offered"] is True
        offer.get_by_role("button", name="Done").click()
        expect(page.locator("#messages .first-run")).to_have_count(0, timeout=TIMEOUT)
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        expect(page.locator("#messages .first-run")).to_have_count(0)  # asked once
    finally:
        context.close()
        app.stop()
        server.stop()


def test_a_preset_fills_the_endpoint_and_fetch_models_lists_them(browser: Any, tmp_path: Path) -> None:
    server = models_server()
    app = start_app(tmp_path / "home")
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(app.url)
        page.wait_for_selector("body[data-ready=true]")
        page.locator("#messages .first-run").get_by_role("button", name="Add a model").click()
        form = page.locator("#settings form.add-provider")
        expect(form).to_be_visible(timeout=TIMEOUT)
        form.locator("select[name=preset]").select_option("groq")
        expect(form.locator("input[name=base_url]")).to_have_value("https://api.groq.com/openai/v1")
        expect(form.locator("input[name=name]")).to_have_value("groq")
        form.locator("select[name=preset]").select_option("ollama")
        expect(form.locator("input[name=key]")).to_be_hidden()  # a local server needs no key
        form.locator("input[name=base_url]").fill(f"{server.url}/v1")
        form.get_by_role("button", name="Fetch models").click()
        choices = form.locator(".model-choices input[type=checkbox]")
        expect(choices).to_have_count(2, timeout=TIMEOUT)
        form.locator(".model-choices label", has_text="qwen3:8b").locator("input").check()
        expect(form.locator("input[name=models]")).to_have_value("qwen3:8b")
        form.get_by_role("button", name="Add", exact=True).click()
        expect(page.locator('#settings .provider[data-provider="ollama"]')).to_contain_text("qwen3:8b", timeout=TIMEOUT)
    finally:
        context.close()
        app.stop()
        server.stop()

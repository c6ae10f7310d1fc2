"""Regenerate the screenshots of the journeys issue 35 walked into docs/screenshots/: a group chat while its
members answer at once, Settings → Usage limits, and the phone view (its list, and a chat with an approval).

Runs the real app (`orkas serve --mirror`) against the wire-level fake Anthropic server, answering each agent
by its system prompt, and photographs it in Debian's chromium (the phone at 390×844 with touch):

    .venv/bin/python scripts/screenshots_journeys.py
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect, sync_playwright  # noqa: E402
from tests.display import CHROMIUM_FLAGS  # noqa: E402
from tests.fakes import anthropic as wire  # noqa: E402
from tests.fakes.routing import ByActor  # noqa: E402
from tests.fakes.server import FakeServer, Reply  # noqa: E402
from tests.mirror_helpers import Mirrored, start_mirrored, stop_mirrored  # noqa: E402
from tests.ui.test_phone import PHONE, semantics, wait_text  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
TIMEOUT = 30_000
MARKERS = {"coder": "CODER-BOT", "critic": "CRITIC-BOT", "commander": "commander of a team"}
CODE = (
    "Here is `parse()`:\n\n```python\ndef parse(text):\n"
    "    return [line for line in text.splitlines() if line.strip()]\n```\n\n"
)
REVIEW = (
    "Two points on the parser:\n\n1. An empty input returns `[]`: good.\n"
    "2. Tabs count as text: say so in the docstring.\n\n"
)


def group_chat(m: Mirrored, fake: FakeServer, browser: Any) -> None:
    for name, does in (("coder", "writes the code"), ("critic", "reviews it")):
        made = m.desktop(
            "POST", "/api/agents", {"name": name, "description": does, "prompt": f"You are {MARKERS[name]}."}
        )
        assert made.status_code == 201, made.text
    chat = m.desktop("POST", "/api/conversations", {"title": "Parser refactor"}).json()["id"]
    m.desktop("PUT", f"/api/conversations/{chat}/members", {"members": ["coder", "critic"]})
    router = ByActor(MARKERS)
    router.add(
        "commander",
        wire.message(
            wire.text("I'll ask the coder for the function and the critic for a review, at once."),
            wire.tool_use("dispatch_to", {"to": "coder", "message": "write parse()"}, id="toolu_a"),
            wire.tool_use("dispatch_to", {"to": "critic", "message": "review the parser plan"}, id="toolu_b"),
        ),
        wire.reply_text("Both are done: the function is above, with the critic's two notes."),
    )
    # Long enough, slowly enough, that both are still writing when the picture is taken.
    router.add("coder", Reply(events=wire.events([wire.text(CODE * 4)]), event_delay=1.0))
    router.add("critic", Reply(events=wire.events([wire.text(REVIEW * 4)]), event_delay=1.0))
    fake.script(*[router] * router.total)
    page = browser.new_page(viewport={"width": 1280, "height": 800}, device_scale_factor=1)
    page.goto(f"{m.base}/?token={m.token}")
    page.wait_for_selector("body[data-ready=true]")
    page.get_by_role("button", name="Parser refactor").click()
    page.fill("#composer textarea", "Write the parser and review it")
    page.press("#composer textarea", "Enter")
    for actor in ("coder", "critic"):
        expect(page.locator(f'.msg.assistant.agent[data-actor="{actor}"] .markdown')).not_to_be_empty(timeout=TIMEOUT)
    page.screenshot(path=str(OUT / "group-live.png"))
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=60_000)

    assert m.desktop("PUT", "/api/budget", {"per_day": "5", "per_month": "60", "per_conversation": "1.5"}).is_success
    page.click("#settings-button")
    page.locator("#settings").get_by_role("button", name="Usage").click()
    expect(page.locator("#settings .usage-limits input[name=per_day]")).to_have_value("5", timeout=TIMEOUT)
    page.screenshot(path=str(OUT / "usage-limits.png"))
    page.close()


def phone(m: Mirrored, fake: FakeServer, browser: Any) -> None:
    chat = m.desktop("POST", "/api/conversations", {"title": "Release build"}).json()["id"]
    pairing = m.desktop("POST", "/api/mirror/pairings", {}).json()
    context = browser.new_context(ignore_https_errors=True, device_scale_factor=2, **PHONE)
    page = context.new_page()
    page.goto(pairing["link"])
    semantics(page)
    wait_text(page, "Pair this phone")
    page.get_by_role("button", name="Pair").click()
    wait_text(page, "Conversations")
    wait_text(page, "Release build")
    wait_text(page, "New chat")
    page.wait_for_timeout(500)  # the New chat button's entrance
    page.screenshot(path=str(OUT / "phone-list.png"))
    fake.script(
        wire.message(
            wire.text("I'll clean the build folder, then build the release."),
            wire.tool_use("bash", {"command": "rm -rf build && make release"}, id="toolu_r"),
        ),
        wire.reply_text("Release built."),
    )
    page.get_by_text("Release build").first.click()
    wait_text(page, "Message (use @ to address an agent)")
    sent = m.desktop("POST", f"/api/conversations/{chat}/messages", {"text": "Clean the build and make a release"})
    assert sent.status_code == 202, sent.text
    wait_text(page, "Allow once", timeout=30)
    page.screenshot(path=str(OUT / "phone-approval.png"))
    page.get_by_label("Deny", exact=True).or_(page.get_by_text("Deny", exact=True)).first.click()
    context.close()


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    fake = FakeServer(wire.PATH).start()
    home = Path(tempfile.mkdtemp(prefix="orkas-shots-")) / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"preferences": {"auto_title": False}}))
    m = start_mirrored(fake, home, 0)
    try:
        with sync_playwright() as playwright:
            chromium = shutil.which("chromium") or "chromium"
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
            group_chat(m, fake, browser)
            phone(m, fake, browser)
            browser.close()
    finally:
        stop_mirrored(m)
        fake.stop()
        shutil.rmtree(home.parent, ignore_errors=True)
    for name in ("group-live", "usage-limits", "phone-list", "phone-approval"):
        shot = OUT / f"{name}.png"
        print(f"{shot.relative_to(ROOT)}: {shot.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()

"""Instruction files in the real browser against a real `orkas serve` and the wire fake: a chat in a folder with
AGENTS.md asks once whether to use them (before its first message), the header says which are in force and opens
them, Settings → Instructions lists the trusted folder and revokes it; and the person's own Claude Code file is
offered once on a blank page, read only when they choose. No test waits a fixed time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import start_app
from tests.ui.test_folders_ui import BRIDGE

TIMEOUT = 15_000


def system_of(server: FakeServer, index: int = -1) -> str:
    system = server.requests[index].json["system"]
    return system if isinstance(system, str) else " ".join(block["text"] for block in system)


def opened(browser: Any, url: str, picks: list[str]) -> tuple[Page, list[str]]:
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    context.add_init_script(BRIDGE % json.dumps(picks))
    page: Page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    return page, errors


def test_a_folder_s_instructions_are_asked_about_once_shown_in_force_and_revoked(
    browser: Any, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "AGENTS.md").write_text("ROOT-RULE: make check. See @docs/style.md\n")
    (project / "docs" / "style.md").write_text("IMPORTED-RULE\n")
    home = tmp_path / "data"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"preferences": {"auto_title": False, "offered": True}}))
    app = start_app(home, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    anthropic_server.script(wire.reply_text("first answer"), wire.reply_text("second answer"))
    page, errors = opened(browser, app.url, [str(project)])
    try:
        page.locator("#new-in-folder").click()
        dialog = page.locator("dialog.instructions-dialog")
        expect(dialog).to_contain_text("Use the instructions in this folder?", timeout=TIMEOUT)
        expect(dialog.locator("summary")).to_have_text(["AGENTS.md", "docs/style.md"])
        dialog.locator("summary").first.click()
        expect(dialog.locator("pre").first).to_contain_text("ROOT-RULE")
        dialog.get_by_role("button", name="Use them").click()
        chip = page.locator("#instructions")
        expect(chip).to_have_text("Instructions: AGENTS.md (2 files)", timeout=TIMEOUT)
        expect(dialog).to_have_count(0, timeout=TIMEOUT)  # closed: the page behind a modal dialog takes no keys
        trusted = json.loads((home / "trusted_folders.json").read_text())["folders"]
        assert [(f["folder"], f["answer"]) for f in trusted] == [(str(project.resolve()), "trusted")]
        page.fill("textarea.input", "hello")
        page.keyboard.press("Enter")
        expect(page.locator(".msg.assistant").last).to_contain_text("first answer", timeout=TIMEOUT)
        assert "ROOT-RULE" in system_of(anthropic_server) and 'untrusted_data source="instr' not in system_of(
            anthropic_server
        )
        expect(dialog).to_have_count(0)  # asked once: opening the chat again does not ask

        page.locator("#settings-button").click()
        section = page.locator("#settings section.instructions")
        row = section.locator(".trusted-folder")
        expect(row).to_contain_text(str(project.resolve()), timeout=TIMEOUT)
        row.get_by_role("button", name="Revoke").click()
        expect(section.locator(".trusted-folder")).to_have_count(0, timeout=TIMEOUT)
        page.keyboard.press("Escape")
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        # asked again after a revoke: the person says no this time, and the chip says the files are not trusted
        expect(dialog).to_contain_text("Use the instructions in this folder?", timeout=TIMEOUT)
        dialog.get_by_role("button", name="Don't use").click()
        expect(chip).to_have_text("Instructions: AGENTS.md (2 files) · not trusted", timeout=TIMEOUT)
        expect(dialog).to_have_count(0, timeout=TIMEOUT)
        page.fill("textarea.input", "again")
        page.keyboard.press("Enter")
        expect(page.locator(".msg.assistant").last).to_contain_text("second answer", timeout=TIMEOUT)
        assert 'untrusted_data source="instructions' in system_of(anthropic_server)
        chip.click()  # opens them, with a way to trust the folder after all
        expect(dialog.get_by_role("button", name="Use them")).to_be_visible(timeout=TIMEOUT)
        page.keyboard.press("Escape")
        assert not errors, errors
    finally:
        page.context.close()
        app.stop()


def test_the_person_s_claude_file_is_offered_once_and_read_live_only_when_chosen(
    browser: Any, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    person = tmp_path / "person"
    (person / ".claude").mkdir(parents=True)
    (person / ".claude" / "CLAUDE.md").write_text("PERSONAL-RULE: British English\n")
    home = tmp_path / "data"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"preferences": {"auto_title": False, "offered": True}}))
    app = start_app(home, HOME=str(person), ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    anthropic_server.script(wire.reply_text("cheers"))
    page, errors = opened(browser, app.url, [])
    try:
        offer = page.locator("#messages .personal-offer")
        expect(offer).to_contain_text("Claude Code: ~/.claude/CLAUDE.md", timeout=TIMEOUT)
        expect(offer).not_to_contain_text("PERSONAL-RULE")  # offered by name: nothing read before the answer
        offer.get_by_role("button", name="Read it live").click()
        expect(page.locator("#messages .personal-done")).to_contain_text("read from that file", timeout=TIMEOUT)
        page.fill("textarea.input", "hello")
        page.keyboard.press("Enter")
        expect(page.locator(".msg.assistant").last).to_contain_text("cheers", timeout=TIMEOUT)
        assert "PERSONAL-RULE" in system_of(anthropic_server)
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        page.locator("#new-chat").click()
        expect(page.locator("#messages .empty")).to_be_visible(timeout=TIMEOUT)
        expect(page.locator("#messages .personal-offer")).to_have_count(0)  # asked once
        assert not errors, errors
    finally:
        page.context.close()
        app.stop()

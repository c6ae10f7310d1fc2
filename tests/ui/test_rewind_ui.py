"""Rewind in the real browser against a real `orkas serve` and the wire fake: the model's shell command (auto mode:
confined, with a writable workspace) deletes, rewrites and chmods files; the ⟲ on the person's message previews
what will come back and asks; the rewind puts the files back exactly and the message back in the box, the
conversation's tail kept as a version; the notice's Undo takes the files' rewind back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.folder_tree import tree
from tests.ui.conftest import start_app
from tests.ui.test_instructions_ui import opened

TIMEOUT = 15_000
COMMAND = "rm a.txt && printf 'rewritten' > b.txt && chmod 600 run.sh && mkdir gen && printf made > gen/new.txt"


def test_a_command_s_changes_are_previewed_rewound_and_the_rewind_undone(
    browser: Any, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    (project / "b.txt").write_text("two\n")
    (project / "run.sh").write_text("echo hi\n")
    (project / "run.sh").chmod(0o755)
    before = tree(project)
    home = tmp_path / "data"
    home.mkdir()
    preferences = {"auto_title": False, "offered": True, "mode": "auto"}
    (home / "settings.json").write_text(json.dumps({"preferences": preferences}))
    app = start_app(home, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    anthropic_server.script(
        wire.message(wire.tool_use("bash", {"command": COMMAND}, id="toolu_1")), wire.reply_text("done")
    )
    page, errors = opened(browser, app.url, [str(project)])
    try:
        page.locator("#new-in-folder").click()
        page.fill("textarea.input", "tidy the project")
        page.keyboard.press("Enter")
        expect(page.locator(".msg.assistant").last).to_contain_text("done", timeout=TIMEOUT)
        changed = tree(project)
        told = anthropic_server.requests[-1].json["messages"][-1]["content"]  # what the command's run said
        assert "a.txt" not in changed and changed["run.sh"][1] == 0o600, f"the command did not run: {told}"
        page.locator(".msg.user .rewind-message").click()
        dialog = page.locator("dialog.rewind-dialog")
        expect(dialog.locator(".rewind-files.restore")).to_contain_text("2 to restore", timeout=TIMEOUT)
        expect(dialog.locator(".rewind-files.restore")).to_contain_text("b.txt")
        expect(dialog.locator(".rewind-files.create")).to_contain_text("a.txt")
        expect(dialog.locator(".rewind-files.delete")).to_contain_text("gen/new.txt")
        expect(dialog.locator(".rewind-talk")).to_contain_text("kept as another version")
        assert tree(project) == changed  # the preview changed nothing
        dialog.get_by_role("button", name="Rewind").click()
        notice = page.locator("#notices .rewound")
        expect(notice).to_contain_text("Files put back as they were: 4", timeout=TIMEOUT)
        assert tree(project) == before
        expect(page.locator("textarea.input")).to_have_value("tidy the project")  # back in the box
        expect(page.locator(".msg.user")).to_have_count(0, timeout=TIMEOUT)  # the conversation is before it
        notice.get_by_role("button", name="Undo").click()
        expect(notice).to_contain_text("as it was before the rewind", timeout=TIMEOUT)
        assert tree(project) == changed
        expect(page.locator(".msg.user")).to_have_count(1, timeout=TIMEOUT)  # the conversation back as well
        expect(page.locator(".msg.assistant").last).to_contain_text("done")
        page.locator("#new-chat").click()
        expect(page.locator("#notices .rewound")).to_have_count(0)  # its notice belongs to its own chat
        assert not errors, errors
    finally:
        page.context.close()
        app.stop()

"""Rewind from the phone, in a real browser over the mirror's TLS: the person's message offers it, the dialog shows
the desktop's preview (the files that come back, go, are deleted) and nothing changes until Rewind is tapped; then
the files are back and the conversation reads from before that message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.mirror_helpers import Mirrored
from tests.ui.test_phone import COMPOSER, icon, type_into, wait_text
from tests.ui.test_phone_journeys import IN_A_CHAT, opened, phone  # noqa: F401 — `phone` is a fixture


def test_rewind_on_the_phone_previews_asks_and_puts_the_files_back(
    phone: Any,  # noqa: F811
    mirrored: Mirrored,
    anthropic_server: FakeServer,
) -> None:
    chat = mirrored.desktop("POST", "/api/conversations", {"title": "Notes"}).json()
    workspace = Path(chat["workspace"])
    (workspace / "notes.txt").write_text("the original\n")
    anthropic_server.script(
        wire.message(wire.tool_use("read_file", {"path": "notes.txt"}, id="toolu_0")),
        wire.message(
            wire.tool_use("write_file", {"path": "notes.txt", "content": "overwritten\n"}, id="toolu_1"),
            wire.tool_use("write_file", {"path": "made.txt", "content": "new\n"}, id="toolu_2"),
        ),
        wire.reply_text("Both written."),
    )
    page = phone()
    opened(page, "Notes")
    type_into(page, COMPOSER, "rewrite my notes")
    icon(page, "Send").tap()
    for _ in range(2):  # each write asks (ask mode, the default): allowed from the phone
        page.get_by_role("button", name="Allow once").first.click()
        wait_text(page, "Allowed once on")
    wait_text(page, "Both written.")
    assert (workspace / "notes.txt").read_text() == "overwritten\n" and (workspace / "made.txt").exists()
    page.get_by_role("button", name="Rewind").first.click()
    wait_text(page, "Rewind to before this message")
    wait_text(page, "1 to restore")
    wait_text(page, "1 to delete")
    assert (workspace / "notes.txt").read_text() == "overwritten\n"  # the preview changed nothing
    page.get_by_role("button", name="Rewind", exact=True).click()
    wait_text(page, "Files put back as they were: 2")
    assert (workspace / "notes.txt").read_text() == "the original\n" and not (workspace / "made.txt").exists()
    wait_text(page, IN_A_CHAT)
    page.get_by_text("Both written.").wait_for(state="detached", timeout=20_000)  # read again: before that message

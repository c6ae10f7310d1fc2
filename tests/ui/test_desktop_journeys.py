"""Journeys a person walks in the desktop page, end to end in a real browser against a real `orkas serve`
(issue 35). No test waits a fixed time for the app."""

from __future__ import annotations

import re
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.conftest import subprocess_env
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer, Reply
from tests.ui.conftest import ORKAS, free_port, start_app

TIMEOUT = 20_000


def test_a_tab_open_when_orkas_restarts_says_so_instead_of_reconnecting_forever(
    browser: Any, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    port, home = free_port(), tmp_path / "home"
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": anthropic_server.url}
    app = start_app(home, port=port, **env)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        httpx.post(f"{app.base}/api/conversations", json={"title": "Garden"}, headers={"X-Orkas-Token": app.token})
        page = context.new_page()
        page.goto(app.url)
        page.wait_for_selector("body[data-ready=true]")
        page.get_by_role("button", name="Garden").click()
        app.stop()
        expect(page.locator("#offline")).to_have_text("Connection lost — reconnecting…", timeout=TIMEOUT)
        app = start_app(home, port=port, **env)  # the same address, a new launch's token
        banner = page.locator("#offline")
        expect(banner).to_contain_text("Orkas may have been restarted", timeout=TIMEOUT)
        expect(banner).to_contain_text("orkas serve")
        page.get_by_role("button", name="Garden").click()  # what the person tries next: still said, no "reconnecting"
        expect(banner).to_contain_text("Orkas may have been restarted")
        fresh = context.new_page()  # and the new link works
        fresh.goto(app.url)
        fresh.wait_for_selector("body[data-ready=true]")
        expect(fresh.get_by_role("button", name="Garden")).to_be_visible()
        expect(fresh.locator("#offline")).to_be_hidden()
    finally:
        context.close()
        app.stop()


def test_a_chat_a_terminal_starts_appears_in_the_open_window_without_a_reload(
    browser: Any, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": anthropic_server.url}
    app = start_app(home, **env)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(app.url)
        page.wait_for_selector("body[data-ready=true]")
        anthropic_server.script(a_wire.reply_text("Hello from the terminal."))
        (tmp_path / "ws").mkdir()
        ran = subprocess.run(
            [ORKAS, "run", "say hello", "--model", "anthropic/claude-test"],
            env=subprocess_env(ORKAS_HOME=str(home), **env), capture_output=True, text=True, timeout=60,
            stdin=subprocess.DEVNULL, cwd=tmp_path / "ws",
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        [chat] = httpx.get(f"{app.base}/api/conversations", headers={"X-Orkas-Token": app.token}).json()
        entry = page.locator(f'#chats li.chat[data-id="{chat["id"]}"]')
        expect(entry).to_be_visible(timeout=TIMEOUT)
        entry.get_by_role("button", name=chat["title"] or "Untitled chat").click()
        expect(page.locator("#messages")).to_contain_text("Hello from the terminal.", timeout=TIMEOUT)
    finally:
        context.close()
        app.stop()


def png(width: int, height: int) -> bytes:
    """A grey picture of the given size (big enough to grow the chat when it loads)."""
    row = b"\x00" + b"\x80\x80\x80" * width

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


IN_VIEW = """card => { const box = document.querySelector('#scroll').getBoundingClientRect();
  const at = card.getBoundingClientRect(); return at.top >= box.top && at.bottom <= box.bottom; }"""
AT_BOTTOM = (
    "() => { const s = document.querySelector('#scroll'); return s.scrollHeight - s.scrollTop - s.clientHeight < 48; }"
)


def test_the_chat_follows_new_content_and_never_hides_a_waiting_approval(
    page: Any, app: Any, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    long = "\n\n".join(f"Step {n}: a paragraph of the plan, long enough to fill a line or two." for n in range(40))
    anthropic_server.script(
        a_wire.message(a_wire.text(long), a_wire.tool_use("write_file", {"path": "plan.md", "content": "p"}, id="tw")),
        a_wire.reply_text("Written."),
        a_wire.reply_text("A grey picture."),
    )
    page.fill("textarea.input", "plan it")
    page.keyboard.press("Enter")
    card = page.locator(".permission-card")
    expect(card).to_be_visible(timeout=TIMEOUT)
    page.wait_for_function(IN_VIEW, arg=card.element_handle(), timeout=TIMEOUT)  # it came into view by itself
    page.click("#new-chat")  # away and back: the chat opens on its waiting approval, not at the top
    page.locator("#chats .chat button.chat-open").first.click()
    expect(card).to_be_visible(timeout=TIMEOUT)
    page.wait_for_function(IN_VIEW, arg=card.element_handle(), timeout=TIMEOUT)
    pill = page.locator("#waiting-pill")
    expect(pill).to_be_hidden()
    page.locator("#scroll").hover()
    page.mouse.wheel(0, -20_000)  # the person scrolls up to read the plan
    expect(pill).to_have_text("1 approval waiting ↓", timeout=TIMEOUT)
    pill.click()
    page.wait_for_function(IN_VIEW, arg=card.element_handle(), timeout=TIMEOUT)
    expect(card).to_be_focused()  # its keys answer it now
    expect(pill).to_be_hidden()
    card.locator("button.allow_once").click()
    expect(page.locator(".msg.assistant .markdown").last).to_have_text("Written.", timeout=TIMEOUT)
    picture = tmp_path / "grey.png"  # sent from the bottom, it grows the chat when it loads, after the send
    picture.write_bytes(png(300, 320))
    page.locator("#composer input[type=file]").set_input_files(str(picture))
    expect(page.locator("#composer .chip[data-attachment-id]")).to_have_count(1, timeout=TIMEOUT)
    page.fill("textarea.input", "and this?")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown").last).to_have_text("A grey picture.", timeout=TIMEOUT)
    page.wait_for_function("document.querySelector('.msg.user img.inline-image')?.naturalHeight === 320")
    page.wait_for_function(AT_BOTTOM, timeout=TIMEOUT)


# What the chat shows, top to bottom: each approval card, tool card and piece of text, in document order.
READING_ORDER = """() => [...document.querySelectorAll(
  '#messages .permission-card, #messages .tool-card, #messages .msg.assistant .markdown')].map((node) =>
  node.matches('.permission-card') ? 'card' : node.matches('.tool-card') ? 'tool' : node.textContent.trim())"""


def test_an_approved_command_reads_as_the_question_then_what_it_did_then_the_answer(
    page: Any, app: Any, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(
        a_wire.message(a_wire.text("I will make it."), a_wire.tool_use("bash", {"command": "touch made.txt"}, id="tb")),
        a_wire.reply_text("Made it."),
    )
    page.fill("textarea.input", "make the file")
    page.keyboard.press("Enter")
    card = page.locator(".permission-card")
    card.locator("button.allow_once").click(timeout=TIMEOUT)
    expect(page.locator(".msg.assistant .markdown").last).to_have_text("Made it.", timeout=TIMEOUT)
    expect(page.locator(".tool-card")).to_have_class(re.compile(r"\bok\b"))
    expect(card.locator(".answer")).to_contain_text("Allow once")  # who answered, and how
    assert page.evaluate(READING_ORDER) == ["I will make it.", "card", "tool", "Made it."]
    live = card.inner_text()
    # Reopened later, the chat still says what was asked and how it was answered, where it was asked.
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".msg.assistant .markdown").last).to_have_text("Made it.", timeout=TIMEOUT)
    expect(card).to_have_class(re.compile(r"\banswered\b.*\ballowed\b"))
    assert page.evaluate(READING_ORDER) == ["I will make it.", "card", "tool", "Made it."]
    assert card.locator("pre.preview").inner_text() == "touch made.txt"
    assert card.locator(".answer").inner_text() in live
    expect(card.locator("button:not([disabled])")).to_have_count(0)


def test_a_new_chat_offers_no_options_for_a_chat_that_does_not_exist_yet(
    page: Any, app: Any, anthropic_server: FakeServer
) -> None:
    options = [page.locator(f"#{name}") for name in ("folders-button", "rename", "delete", "export")]
    for option in options:  # the blank page of a first start
        expect(option).to_be_hidden()
    anthropic_server.script(a_wire.reply_text("Hello."))
    page.fill("textarea.input", "hi")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown")).to_have_text("Hello.", timeout=TIMEOUT)
    for option in options:  # the chat exists now: each is offered
        expect(option).to_be_visible()
    page.click("#new-chat")
    expect(page.locator("#title")).to_have_text("New chat")
    for option in options:
        expect(option).to_be_hidden()
    page.set_viewport_size({"width": 600, "height": 800})  # a narrow window folds them into "⋯": not offered either
    expect(page.locator("#actions-button")).to_be_hidden()
    page.click("#menu-button")  # the chat list is a drawer there
    page.locator("#chats .chat").first.locator("button.chat-open").click()
    expect(page.locator("#actions-button")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#total")).to_be_hidden()  # no room in a narrow header: the "⋯" menu says what it cost
    page.click("#actions-button")
    expect(page.locator("#actions-total")).to_have_text(re.compile(r"^\$0\.\d+ · \d+ tokens in this chat$"))


def test_a_second_tab_answering_too_late_is_told_what_was_answered(
    page: Any, app: Any, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(
        a_wire.message(a_wire.tool_use("write_file", {"path": "plan.md", "content": "p"}, id="tw")),
        a_wire.reply_text("Written."),
    )
    page.fill("textarea.input", "write the plan")
    page.keyboard.press("Enter")
    first = page.locator(".permission-card")
    expect(first).to_be_visible(timeout=TIMEOUT)

    # Tab B hears of tab A's answer late (a slow link): its own click comes before the news does.
    held: list[Any] = []

    def late_news(socket: Any) -> None:
        server = socket.connect_to_server()
        server.on_message(lambda m: held.append(m) if "permission_answered" in str(m) else socket.send(m))

    other = page.context.new_page()
    other.route_web_socket(re.compile(r"/api/events"), late_news)
    other.goto(app.url)
    other.wait_for_selector("body[data-ready=true]")
    second = other.locator(".permission-card")
    expect(second).to_be_visible(timeout=TIMEOUT)

    first.locator("button.allow_once").click()
    expect(page.locator(".msg.assistant .markdown").last).to_have_text("Written.", timeout=TIMEOUT)
    second.locator("button.deny").click()
    expect(second.locator(".late")).to_have_text(
        "Too late: your Deny was not taken. It had already been answered: Allow once, in another window on this "
        "computer.",
        timeout=TIMEOUT,
    )
    expect(second).to_have_class(re.compile(r"\ballowed\b"))  # the real outcome, not the one clicked
    expect(second.locator("button.allow_once")).to_have_class(re.compile(r"\bchosen\b"))
    expect(second.locator("button:enabled")).to_have_count(0)
    # as a reload draws it: the answer given, no other choice, no keys hint; and here, who gave it
    expect(second.locator(".choices button")).to_have_count(1)
    expect(second.locator(".keys")).to_have_count(0)
    expect(second.locator(".answer")).to_have_text("Answer: Allow once · in another window on this computer")
    expect(first.locator(".answer")).to_have_text("Answer: Allow once")  # its own
    assert held  # the news was indeed late: the card learned it from its own answer
    other.close()


def test_new_text_below_a_reader_who_scrolled_up_is_said_and_the_pill_takes_them_back(
    page: Any, app: Any, anthropic_server: FakeServer
) -> None:
    long = "\n\n".join(f"Step {n}: a paragraph of the plan, long enough to fill a line or two." for n in range(40))
    more = [a_wire.text(f"\n\nMore {n}.") for n in range(8)]
    anthropic_server.script(Reply(events=a_wire.events([a_wire.text(long), *more]), event_delay=0.25))
    page.fill("textarea.input", "plan it")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown")).to_contain_text("Step 39", timeout=TIMEOUT)
    pill = page.locator("#waiting-pill")
    expect(pill).to_be_hidden()  # following: the new text is in sight
    page.locator("#scroll").hover()
    page.mouse.wheel(0, -20_000)  # the person scrolls up to read the plan while it goes on
    expect(pill).to_have_text("New messages ↓", timeout=TIMEOUT)
    pill.click()
    page.wait_for_function(AT_BOTTOM, timeout=TIMEOUT)
    expect(pill).to_be_hidden()
    expect(page.locator(".msg.assistant .markdown")).to_contain_text("More 7.", timeout=TIMEOUT)
    page.wait_for_function(AT_BOTTOM, timeout=TIMEOUT)  # following again to the end

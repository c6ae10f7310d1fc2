"""Big data in the window and on the phone (issue 38), as a person meets it: a 20,000-message conversation opens
on its newest messages, scrolling up brings the older ones in (the reader's place kept), a reply still streams
into it; the sidebar's search finds a conversation among hundreds. The data is written straight in the on-disk
format (tests/big_chat.py), so each test takes seconds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from orkas.adapter.conversations.pages import read_page
from orkas.phone.earlier import PAGE as PHONE_PAGE
from tests.big_chat import write_big_chat, write_many_chats
from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.mirror_helpers import Mirrored
from tests.ui.conftest import App
from tests.ui.test_phone import PHONE, semantics, type_into, wait_text

LAST = "Answer 9090:"  # the 20,000-message conversation's last answer (tests/big_chat.py numbers its turns)


def first_question(page: Page) -> int:
    """The number of the oldest question drawn ("Question N: …")."""
    text = page.locator("#messages .msg.user .text").first.text_content() or ""  # (off screen: not laid out)
    return int(text.split(":", 1)[0].split()[1])


def scroll_to_top(page: Page) -> None:
    # A person leaves the bottom with the wheel: the chat stops following, then goes up.
    page.locator("#scroll").hover()
    page.mouse.wheel(0, -400)
    page.evaluate("document.querySelector('#scroll').scrollTop = 0")


def test_a_long_chat_opens_on_its_newest_messages_and_scrolling_up_brings_older_ones(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    chat = write_big_chat(app.home)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.locator(f'#chats .chat[data-id="{chat}"] .chat-open').click()
    expect(page.locator("#messages .msg.assistant").last).to_contain_text(LAST)
    drawn = page.locator("#messages .msg").count()
    assert drawn < 300, f"{drawn} messages drawn at once"  # a page, not 20,000
    oldest = first_question(page)

    # Up to the top: the page before comes in, above, and the reader stays where they were.
    scroll_to_top(page)
    expect(page.locator("#messages .msg.user .text").first).not_to_contain_text(f"Question {oldest}:")
    assert first_question(page) < oldest
    reading = page.locator("#messages .msg.user .text", has_text=f"Question {oldest}:")
    assert reading.evaluate("(node) => node.getBoundingClientRect().top") >= 0  # not thrown back to the new top
    twice = first_question(page)
    scroll_to_top(page)
    expect(page.locator("#messages .msg.user .text").first).not_to_contain_text(f"Question {twice}:")

    # A reply still streams into it, below the 20,000 messages (which first get compacted: ~675k tokens).
    anthropic_server.script(
        wire.reply_text("Summary of the long history."), wire.reply_text("A fresh answer at the end.")
    )
    page.fill("textarea.input", "one more question")
    page.keyboard.press("Enter")
    expect(page.locator("#messages .msg.assistant").last).to_contain_text("A fresh answer at the end.")


def test_the_sidebar_search_finds_a_chat_among_hundreds_and_opens_it_at_the_words(page: Page, app: App) -> None:
    chats = write_many_chats(app.home, 300)
    write_big_chat(app.home)  # the newest, searched too
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#search", "needle-0007")
    found = page.locator("#chats .chat")
    expect(found).to_have_count(1)
    assert found.first.get_attribute("data-id") == chats[7]
    found.first.locator(".chat-open").click()
    expect(page.locator("#title")).to_have_text("Chat 7")
    expect(page.locator("#find-count")).to_contain_text("1")  # the words marked where they are
    expect(page.locator("#messages .msg.user").first).to_contain_text("needle-0007")

    page.fill("#search", "Chat 123")  # a title's words
    expect(page.locator("#chats .chat .chat-open")).to_have_text(["Chat 123"])
    page.fill("#search", "needle-9999")  # words no chat says
    expect(page.locator("#chats .hint")).to_be_visible()


SHOWN_QUESTIONS = """() => [...document.querySelectorAll("flt-semantics")].flatMap((node) => [
  ...`${node.textContent} ${node.getAttribute("aria-label") ?? ""}`.matchAll(/Question (\\d+):/g)].map((m) => +m[1]))"""


def page_starts(transcript: Path, pages: int) -> list[int]:
    """The first question of the phone's newest page and of each page before it, as the mirror pages them."""
    firsts: list[int] = []
    page = read_page(transcript, limit=PHONE_PAGE)
    for _ in range(pages):
        text = page.messages[0].content[0]
        firsts.append(int(getattr(text, "text", "").split(":", 1)[0].split()[1]))
        page = read_page(transcript, before=page.older, limit=PHONE_PAGE)
    return firsts


def scroll_up_to(page: Page, question: int, gestures: int = 80) -> None:
    """Up the list with the wheel, a screen at a time, until the question is shown (a page before may have to
    come in over the session's socket first: each gesture waits for that, not for a fixed time)."""
    said = f"Question {question}:"
    target = page.get_by_text(said, exact=False).or_(page.get_by_label(said, exact=False))  # as wait_text reads
    for _ in range(gestures):
        page.mouse.move(195, 400)
        page.mouse.wheel(0, -700)
        try:
            target.first.wait_for(state="attached", timeout=1500)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"Question {question} never came in; shown: {page.evaluate(SHOWN_QUESTIONS)}")


def test_a_long_chat_on_the_phone_opens_at_its_end_and_scrolling_up_brings_older_messages(
    browser: Any, mirrored: Mirrored
) -> None:
    chat = write_big_chat(mirrored.home)
    firsts = page_starts(mirrored.home / "conversations" / chat / "messages.jsonl", 5)  # [9064, 9037, 9009, …]
    pairing = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()
    context = browser.new_context(ignore_https_errors=True, **PHONE)
    page = context.new_page()
    try:
        page.goto(pairing["link"])
        semantics(page)
        type_into(page, "Name of this phone", "Test phone")
        page.get_by_role("button", name="Pair").click()
        page.get_by_text("Long history").first.click()
        wait_text(page, LAST)
        assert page.get_by_text(f"Question {firsts[1]}:").count() == 0  # only the newest page drawn

        # Up with the wheel: each page before comes in above as the top is reached, and the wheel goes on up.
        for first in firsts[1:]:  # four pages up, each one's first question reached by the wheel alone
            scroll_up_to(page, first)
    finally:
        context.close()

"""Find in the open chat (Ctrl+F, next and previous, Esc) and Copy on every message, in the real browser."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000


def chat(page: Page, text: str, answer: str) -> None:
    page.fill("#composer textarea", text)
    page.press("#composer textarea", "Enter")
    expect(page.locator(".msg.assistant").last).to_contain_text(answer, timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)


def marked(page: Page, highlight: str) -> list[str]:
    """The text of each range a CSS highlight paints (find.js marks the words, not the messages)."""
    return page.evaluate(f"[...(CSS.highlights.get('{highlight}') ?? [])].map((range) => range.toString())")


def test_find_marks_each_match_counts_them_and_copy_takes_a_message(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(
        wire.reply_text("Lighthouses guide ships."),
        wire.reply_text("A **lighthouse** keeper counts ships from the light-house, not the lighthouse."),
    )
    chat(page, "tell me about lighthouses", "Lighthouses guide ships.")
    chat(page, "and their keepers", "keeper counts ships")
    expect(page.locator(".msg.assistant")).to_have_count(2, timeout=TIMEOUT)
    page.keyboard.press("Control+f")
    expect(page.locator("#find")).to_be_visible()
    expect(page.locator("#find-input")).to_be_focused()
    page.keyboard.type("LIGHTHOUSE")
    expect(page.locator("#find-count")).to_have_text("1 of 4")  # matches, not messages: the last answer has two
    assert marked(page, "find") == ["lighthouse", "Lighthouse", "lighthouse", "lighthouse"]
    assert marked(page, "find-current") == ["lighthouse"]
    page.keyboard.press("Enter")
    expect(page.locator("#find-count")).to_have_text("2 of 4")
    page.locator("#find-next").click()
    page.locator("#find-next").click()
    expect(page.locator("#find-count")).to_have_text("4 of 4")
    page.locator("#find-next").click()
    expect(page.locator("#find-count")).to_have_text("1 of 4")  # wraps around
    page.locator("#find-previous").click()
    expect(page.locator("#find-count")).to_have_text("4 of 4")
    expect(page.locator(".msg.found-current")).to_contain_text("keeper counts ships")
    page.locator("#find-previous").click()
    expect(page.locator("#find-count")).to_have_text("3 of 4")
    holder = "CSS.highlights.get('find-current').values().next().value.startContainer.parentElement.tagName"
    assert page.evaluate(holder) == "STRONG"  # the bold word itself
    page.locator("#find-input").fill("a lighthouse keeper")  # across the bold word's markup
    expect(page.locator("#find-count")).to_have_text("1 of 1")
    assert marked(page, "find") == ["A lighthouse keeper"]
    page.locator("#find-input").fill("albatross")
    expect(page.locator("#find-count")).to_have_text("Not found")
    assert marked(page, "find") == []
    page.locator("#find-input").press("Escape")
    expect(page.locator("#find")).to_be_hidden()
    assert marked(page, "find") == [] and marked(page, "find-current") == []

    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    answer = page.locator(".msg.assistant").last
    answer.hover()
    answer.get_by_role("button", name="Copy").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == "A **lighthouse** keeper counts ships from the light-house, not the lighthouse."  # as written
    expect(answer.locator(".copy-message")).to_have_attribute("data-copied", "true")
    question = page.locator(".msg.user").first
    question.get_by_role("button", name="Copy").click()
    assert page.evaluate("navigator.clipboard.readText()") == "tell me about lighthouses"
    expect(page.locator(".msg.user").first).to_have_text(re.compile(r"^tell me about lighthouses$"))


def test_a_search_result_opens_its_chat_at_the_matching_message(page: Page, app: App) -> None:
    from orkas.adapter.conversations.store import ConversationStore
    from orkas.adapter.conversations.transcript import encode_line
    from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage

    store = ConversationStore(app.home)
    long_chat = store.create(title="Travel notes")
    lines = []
    for n in range(40):
        lines.append(encode_line(UserMessage(content=(TextBlock(text=f"Question {n}"),))))
        words = "Try the pineapple tart in Lisbon." if n == 27 else f"Answer {n}, at some length.\n\n" * 3
        lines.append(encode_line(AssistantMessage(content=(TextBlock(text=words),), provider="p", model="m")))
    store.transcript_path(long_chat.id).write_bytes(b"".join(lines))
    store.create(title="Another chat")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#search", "pineapple")
    result = page.locator("#chats .chat", has_text="Travel notes")
    expect(result.locator(".snippet")).to_contain_text("pineapple tart", timeout=TIMEOUT)
    result.locator("button.chat-open").click()
    current = page.locator(".msg.found-current")
    expect(current).to_contain_text("pineapple tart", timeout=TIMEOUT)
    expect(current).to_be_in_viewport()
    expect(page.locator("#find-input")).to_have_value("pineapple")
    # Older answers drawn as they come near, the find bar opening: nothing new arrived, so nothing says so.
    page.evaluate(
        "() => new Promise((done) => { let n = 0; const f = () => (++n > 30 ? done() : requestAnimationFrame(f)); "
        "f(); })"
    )
    expect(page.locator("#waiting-pill")).to_be_hidden()


def test_find_opened_again_keeps_the_place_and_counts_every_match(page: Page, app: App) -> None:
    from orkas.adapter.conversations.store import ConversationStore
    from orkas.adapter.conversations.transcript import encode_line
    from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage

    store = ConversationStore(app.home)
    shore = store.create(title="Shore notes")
    lines = []
    for n in range(40):
        lines.append(encode_line(UserMessage(content=(TextBlock(text=f"Question {n}"),))))
        words = f"The tide, answer {n}.\n\n" + "Some words at length.\n\n" * 3 + ("ebb " * 1200 if n == 39 else "")
        lines.append(encode_line(AssistantMessage(content=(TextBlock(text=words),), provider="p", model="m")))
    store.transcript_path(shore.id).write_bytes(b"".join(lines))
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".msg.assistant")).to_have_count(40, timeout=TIMEOUT)
    count = page.locator("#find-count")
    page.keyboard.press("Control+f")
    page.keyboard.type("tide")
    expect(count).to_have_text("1 of 40")  # words typed: from the first match
    for _ in range(4):
        page.keyboard.press("Enter")
    expect(count).to_have_text("5 of 40")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+f")  # opened again, the words still there: on the match the person was on
    expect(page.locator("#find-input")).to_have_value("tide")
    expect(count).to_have_text("5 of 40")
    expect(page.locator(".msg.found-current")).to_contain_text("answer 4.")

    page.keyboard.press("Escape")
    page.locator(".msg.assistant").nth(30).evaluate("(node) => node.scrollIntoView({ block: 'start' })")
    page.keyboard.press("Control+f")  # read on meanwhile: the first match from where the person reads
    expect(count).to_have_text("31 of 40")
    current = page.locator(".msg.found-current")
    expect(current).to_contain_text("answer 30.")
    expect(current).to_be_in_viewport()

    page.locator("#find-input").fill("ebb")
    expect(count).to_have_text("1 of 1200")  # every match counted, however many


def test_an_answer_with_nothing_to_copy_offers_no_copy(page: Page, app: App, anthropic_server: FakeServer) -> None:
    anthropic_server.script(wire.error(401, "authentication_error", "invalid x-api-key"), wire.reply_text("Back."))
    page.fill("#composer textarea", "Hello?")
    page.press("#composer textarea", "Enter")
    expect(page.locator(".marker.error")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    copies = page.get_by_role("button", name=re.compile(r"^Copy answer"))
    expect(copies).to_have_count(0)  # only an error: nothing an answer said
    page.locator(".marker.error").get_by_role("button", name="Retry").click()
    expect(page.locator(".msg.assistant .markdown").last).to_have_text("Back.", timeout=TIMEOUT)
    expect(copies).to_have_count(1)  # the answer that has words has its copy

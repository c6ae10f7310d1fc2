"""Per-message actions in the real browser: another answer, edit and resend (the old branch stays
reachable through the arrows), readable errors with Retry and the detail one click away, continue after a
cut-off answer, and ↑ to edit the last message."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Page, WebSocketRoute, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer, Reply
from tests.ui.conftest import App

TIMEOUT = 15_000


def send(page: Page, text: str) -> None:
    page.fill("textarea.input", text)
    page.keyboard.press("Enter")


def answers(page: Page) -> object:
    return page.locator(".msg.assistant .markdown")


def test_another_answer_versions_the_answer_an_edit_versions_the_prompt_and_both_survive_a_reload(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(wire.reply_text("First."), wire.reply_text("Second."), wire.reply_text("Third."))
    send(page, "Name a colour")
    expect(answers(page)).to_have_text(["First."], timeout=TIMEOUT)
    page.get_by_role("button", name="Another answer").first.click(click_count=3)  # quick clicks: one new answer
    expect(answers(page)).to_have_text(["Second."], timeout=TIMEOUT)
    answer = page.locator(".msg.assistant")
    expect(answer.locator(".version-count")).to_have_text("2 of 2", timeout=TIMEOUT)
    expect(page.locator(".msg.user .versions")).to_have_count(0)  # the prompt is the same one: no "2 of 2" on it
    expect(answer.get_by_role("group", name="Versions of answer 1")).to_be_visible()  # said whose they are
    answer.get_by_role("button", name="Previous version").click()
    expect(answers(page)).to_have_text(["First."], timeout=TIMEOUT)
    expect(page.locator(".msg.assistant .version-count")).to_have_text("1 of 2")

    page.locator(".msg.user").get_by_role("button", name="Edit your message").click()
    editor = page.locator(".msg.user .editor textarea")
    expect(editor).to_have_value("Name a colour")
    editor.fill("Name a fruit")
    editor.press("Enter")
    expect(answers(page)).to_have_text(["Third."], timeout=TIMEOUT)
    expect(page.locator(".msg.user .text")).to_have_text("Name a fruit")
    # Two prompts, one answer each: the prompt's arrows count prompts, never the colour's answers with them.
    expect(page.locator(".msg.user .version-count")).to_have_text("2 of 2", timeout=TIMEOUT)
    expect(page.locator(".msg.assistant .versions")).to_have_count(0)
    expect(page.locator(".msg.user").get_by_role("group", name="Versions of your message 1")).to_be_visible()
    # What the model was sent for the edit: the edited message alone, never the old branch.
    sent = anthropic_server.requests[-1].json["messages"]
    assert [m["content"][0]["text"] for m in sent] == ["Name a fruit"]

    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".msg.user .version-count")).to_have_text("2 of 2", timeout=TIMEOUT)
    page.locator(".msg.user").get_by_role("button", name="Previous version").click()
    expect(page.locator(".msg.user .text")).to_have_text("Name a colour", timeout=TIMEOUT)
    expect(answers(page)).to_have_text(["First."])  # the colour's answers come back with it, as left: 1 of 2
    expect(page.locator(".msg.user .version-count")).to_have_text("1 of 2")
    expect(page.locator(".msg.assistant .version-count")).to_have_text("1 of 2")


def test_a_stopped_answer_offers_continue_and_another_answer_at_once(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    words = " ".join(f"w{i}" for i in range(60))
    anthropic_server.script(Reply(events=wire.events([wire.text(words)]), event_delay=0.5))
    send(page, "Tell me a long story")
    expect(answers(page)).to_contain_text("w0", timeout=TIMEOUT)
    page.click("#composer button.stop")
    stopped = page.locator(".marker.stopped")
    expect(stopped.get_by_role("button", name="Continue")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator(".msg.assistant").get_by_role("button", name="Another answer")).to_be_visible()
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".marker.stopped").get_by_role("button", name="Continue")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator(".msg.assistant").get_by_role("button", name="Another answer")).to_be_visible()
    expect(stopped.get_by_role("button", name="Continue answer 1", exact=True)).to_be_visible()  # which one, said


def test_an_error_is_said_in_words_and_retry_answers_again(page: Page, app: App, anthropic_server: FakeServer) -> None:
    overloaded = wire.error(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"})
    anthropic_server.script(overloaded, overloaded, overloaded, overloaded, wire.reply_text("Back again."))
    send(page, "Hello?")
    marker = page.locator(".marker.error")
    words = "The provider is overloaded; Orkas tried 4 times."
    expect(marker.locator(".error-words")).to_have_text(words, timeout=TIMEOUT)
    details = marker.locator(".error-details")
    expect(details.locator("code")).not_to_be_visible()
    details.locator("summary").click()
    expect(details.locator("code")).to_contain_text("529")  # the technical detail, one click away
    marker.get_by_role("button", name="Retry").click()
    expect(answers(page)).to_have_text(["Back again."], timeout=TIMEOUT)
    expect(page.locator(".marker.error")).to_have_count(0)  # the failed try is the other version now
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(answers(page)).to_have_text(["Back again."], timeout=TIMEOUT)
    page.locator(".msg.assistant").get_by_role("button", name="Previous version").click()  # a version of the answer
    # Still in words after a reload: the transcript keeps what the view needs to say it.
    expect(page.locator(".marker.error .error-words")).to_contain_text("overloaded", timeout=TIMEOUT)


def test_a_refused_key_offers_settings(page: Page, app: App, anthropic_server: FakeServer) -> None:
    anthropic_server.script(wire.error(401, "authentication_error", "invalid x-api-key"))
    send(page, "Hello?")
    marker = page.locator(".marker.error")
    expect(marker.locator(".error-words")).to_contain_text("refused the key", timeout=TIMEOUT)
    assert "orkas " not in marker.inner_text()  # never a terminal command for a desktop user
    marker.get_by_role("button", name="Open Settings").click()
    expect(page.locator("#settings")).to_be_visible()


def test_continue_after_a_cut_off_answer_and_up_arrow_edits(page: Page, app: App, anthropic_server: FakeServer) -> None:
    cut = wire.message(wire.text("One, two"), stop_reason="max_tokens")
    anthropic_server.script(cut, cut, wire.reply_text(", three."))  # the engine goes on by itself once
    send(page, "Count")
    cut_off = page.locator(".marker.cut-off")
    expect(cut_off).to_contain_text("cut off", timeout=TIMEOUT)
    cut_off.get_by_role("button", name="Continue").click()
    expect(answers(page).last).to_have_text(", three.", timeout=TIMEOUT)
    expect(page.locator(".marker.cut-off")).to_have_count(0)
    expect(page.locator(".marker.continued")).to_have_count(1)
    expect(page.locator(".msg.user")).to_have_count(1)  # "continue" is a marker, not a message from the person
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".msg.user")).to_have_count(1, timeout=TIMEOUT)
    page.locator("textarea.input").focus()
    page.keyboard.press("ArrowUp")
    expect(page.locator(".msg.user .editor textarea")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator(".msg.user .editor")).to_have_count(0)


def tab_to(page: Page, name: str) -> None:
    """Press Tab until the control named `name` has the focus, as a keyboard user does."""
    for _ in range(40):
        if page.evaluate("document.activeElement?.getAttribute('aria-label')") == name:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {name!r}")


def test_the_keyboard_edits_a_message_as_the_mouse_does_and_the_composer_has_the_focus_after(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(wire.reply_text("Blue."), wire.reply_text("Apple."), wire.reply_text("Pear."))
    send(page, "Name a colour")
    expect(answers(page)).to_have_text(["Blue."], timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    page.locator(".msg.user .text").click()  # reading the message: Tab goes on from there
    editor = page.locator(".msg.user .editor textarea")
    for key in ("Space", "Enter"):  # either key on the button opens the editor, and only opens it
        tab_to(page, "Edit your message 1")
        page.keyboard.down(key)
        page.keyboard.down(key)  # held a moment: the key repeats, into the editor once it is open
        page.keyboard.up(key)
        expect(editor).to_be_focused()
        assert editor.evaluate("(box) => [box.selectionStart, box.selectionEnd]") == [13, 13]  # caret at the end
        expect(editor).to_have_value("Name a colour")
        assert len(anthropic_server.requests) == 1  # nothing sent by the key that opened it
        page.keyboard.press("Escape")
        expect(editor).to_have_count(0)
        expect(page.get_by_role("button", name="Edit your message 1")).to_be_focused()  # back where it was
    tab_to(page, "Edit your message 1")
    page.keyboard.press("Space")
    page.keyboard.type(" please")
    page.keyboard.press("Enter")  # in the open editor, Enter sends as with the mouse
    expect(page.locator(".msg.user .text")).to_have_text("Name a colour please", timeout=TIMEOUT)
    expect(answers(page)).to_have_text(["Apple."], timeout=TIMEOUT)
    composer = page.locator("#composer textarea")
    expect(composer).to_be_focused()  # not the page: the person types on
    page.keyboard.type("And a fruit?")
    page.keyboard.press("Enter")
    expect(answers(page)).to_have_text(["Apple.", "Pear."], timeout=TIMEOUT)


def test_up_arrow_brings_the_editor_into_view_when_the_message_is_scrolled_away(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    long = "\n\n".join(f"Step {n}: a paragraph of the plan, long enough to fill a line or two." for n in range(60))
    anthropic_server.script(wire.reply_text(long))
    send(page, "Plan my week")
    expect(answers(page)).to_contain_text("Step 59", timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    expect(page.locator(".msg.user")).not_to_be_in_viewport()  # the long answer pushed it up
    page.locator("textarea.input").focus()
    page.keyboard.press("ArrowUp")
    editor = page.locator(".msg.user .editor textarea")
    expect(editor).to_be_focused()
    expect(editor).to_be_in_viewport()  # where the typing goes is seen
    page.keyboard.type(" gently")
    expect(editor).to_have_value("Plan my week gently")
    expect(editor).to_be_in_viewport()  # and the chat did not go back to the bottom meanwhile


def test_another_answer_pressed_while_the_finished_run_writes_up_is_done_once_it_is_idle(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    """The answer's buttons are out at its end, before the run is idle (it still writes up: the index, the lock).
    A press in that moment was dropped without a word; it is done once the run is idle. The run's `idle` event is
    held back on its way to the page to make that moment last as long as the test needs."""
    anthropic_server.script(wire.reply_text("First."), wire.reply_text("Second."))
    held: list[str | bytes] = []
    routes: list[WebSocketRoute] = []

    def route(socket: WebSocketRoute) -> None:
        routes.append(socket)
        server = socket.connect_to_server()

        def from_server(message: str | bytes) -> None:
            if not held and json.loads(message).get("type") == "idle":
                held.append(message)  # the first run's idle, kept until the test lets it through
            else:
                socket.send(message)

        server.on_message(from_server)

    page.route_web_socket(re.compile(r".*/api/events\?conversation=.*"), route)
    send(page, "Name a colour")
    expect(answers(page)).to_have_text(["First."], timeout=TIMEOUT)
    for _ in range(TIMEOUT // 20):  # the run has ended on the server; the page has not heard it yet
        if held:
            break
        page.wait_for_timeout(20)
    assert held, "the run's idle never came"
    page.get_by_role("button", name="Another answer").first.click()
    routes[-1].send(held[0])  # now the page hears the run is idle
    expect(answers(page)).to_have_text(["Second."], timeout=TIMEOUT)
    expect(page.locator(".msg.assistant .version-count")).to_have_text("2 of 2", timeout=TIMEOUT)

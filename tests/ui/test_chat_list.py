"""The chat list in the real browser: grouped by day, pinning keeps a chat on top across reloads."""

from __future__ import annotations

import json
import re
import time

from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App, answer_dialog

TIMEOUT = 15_000


def test_chats_are_grouped_by_day_and_a_pinned_one_stays_on_top(page: Page, app: App) -> None:
    now = time.time()
    folder = app.home / "conversations"
    for ident, title, age_days in (("aaaaaaaa11", "old notes", 30), ("bbbbbbbb22", "this morning", 0)):
        (folder / ident).mkdir(parents=True)
        meta = {
            "id": ident,
            "title": title,
            "created": now - age_days * 86400,
            "updated": now - age_days * 86400,
            "workspace": str(app.home / "workspaces" / ident),
        }
        (folder / ident / "meta.json").write_text(json.dumps(meta))
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    items = page.locator("#chats > li")
    expect(items).to_have_text(["Today", "this morning", "Earlier", "old notes"], timeout=TIMEOUT)
    page.locator("#chats .chat", has_text="old notes").get_by_role("button", name="Pin").click()
    expect(items).to_have_text(["Pinned", "old notes", "Today", "this morning"], timeout=TIMEOUT)
    assert json.loads((folder / "aaaaaaaa11" / "meta.json").read_text())["pinned"] is True
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(items).to_have_text(["Pinned", "old notes", "Today", "this morning"], timeout=TIMEOUT)
    page.locator("#chats .chat", has_text="old notes").get_by_role("button", name="Unpin").click()
    expect(items).to_have_text(["Today", "this morning", "Earlier", "old notes"], timeout=TIMEOUT)


def test_any_chat_is_renamed_and_deleted_from_its_own_menu_with_in_app_dialogs(page: Page, app: App) -> None:
    browser_dialogs: list[str] = []
    page.on("dialog", lambda dialog: (browser_dialogs.append(dialog.type), dialog.dismiss()))
    folder = app.home / "conversations"
    now = time.time()
    for ident, title in (("cccccccc33", "draft plan"), ("dddddddd44", "groceries")):
        (folder / ident).mkdir(parents=True)
        meta = {"id": ident, "title": title, "created": now, "updated": now, "workspace": str(app.home)}
        (folder / ident / "meta.json").write_text(json.dumps(meta))
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator("#title")).to_have_text("draft plan", timeout=TIMEOUT)  # the first one opened
    other = page.locator("#chats .chat", has_text="groceries")
    other.locator("summary").click()
    other.get_by_role("button", name="Rename").click()
    dialog = page.locator("dialog.ask[open]")
    expect(dialog.locator("input")).to_have_value("groceries")
    dialog.get_by_role("button", name="Cancel").click()  # dismissed: nothing changes
    expect(dialog).to_have_count(0)
    other.locator("summary").click()
    other.get_by_role("button", name="Rename").click()
    answer_dialog(page, "weekly groceries")
    expect(page.locator("#chats .chat", has_text="weekly groceries")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#title")).to_have_text("draft plan")  # the open chat is still the open chat
    assert json.loads((folder / "dddddddd44" / "meta.json").read_text())["title"] == "weekly groceries"
    renamed = page.locator("#chats .chat", has_text="weekly groceries")
    renamed.locator("summary").click()
    renamed.get_by_role("button", name="Delete").click()
    expect(page.locator("dialog.ask[open]")).to_contain_text("recycle bin")
    answer_dialog(page)
    expect(page.locator("#chats .chat")).to_have_count(1, timeout=TIMEOUT)
    expect(page.locator("#title")).to_have_text("draft plan")
    assert (app.home / "recycle" / "dddddddd44").exists()
    assert browser_dialogs == []  # never a browser prompt or confirm


CONTRAST = """(node) => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const linear = (x) => (x /= 255) <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
  const lum = (c) => { const v = rgb(c).map(linear); return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  let back = node;
  let bg = getComputedStyle(back).backgroundColor;
  while (bg === "rgba(0, 0, 0, 0)" || bg === "transparent") {
    back = back.parentElement;
    bg = getComputedStyle(back).backgroundColor;
  }
  const [a, b] = [lum(getComputedStyle(node).color), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


def test_undo_after_a_delete_is_a_readable_button_in_a_neutral_toast(page: Page, app: App) -> None:
    folder = app.home / "conversations"
    now = time.time()
    (folder / "eeeeeeee55").mkdir(parents=True)
    meta = {"id": "eeeeeeee55", "title": "old notes", "created": now, "updated": now, "workspace": str(app.home)}
    (folder / "eeeeeeee55" / "meta.json").write_text(json.dumps(meta))
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    chat = page.locator("#chats .chat", has_text="old notes")
    chat.locator("summary").click()
    chat.get_by_role("button", name="Delete").click()
    answer_dialog(page)
    toast = page.locator(".toast", has_text="recycle bin")
    expect(toast).to_be_visible(timeout=TIMEOUT)
    expect(toast).not_to_have_attribute("role", "alert")  # news, not an error
    undo = toast.get_by_role("button", name="Undo")
    assert undo.evaluate(CONTRAST) >= 4.5  # it was white on white
    assert toast.evaluate(CONTRAST) >= 4.5
    undo.click()
    expect(page.locator("#chats .chat", has_text="old notes")).to_be_visible(timeout=TIMEOUT)


def send(page: Page, text: str) -> None:
    page.fill("#composer textarea", text)
    page.press("#composer textarea", "Enter")


def search_results(page: Page, words: str) -> object:
    """The sidebar's results for `words` (typed into the search box, as a person would)."""
    page.fill("#search", words)
    return page.locator("#chats .chat")


def test_the_sidebar_search_follows_an_edit_another_answer_and_the_version_shown(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(
        wire.reply_text("Zebras have stripes."),
        wire.reply_text("Quokkas smile a lot."),
        wire.reply_text("Quokkas live on Rottnest."),
    )
    answers = page.locator(".msg.assistant .markdown")
    send(page, "Tell me about zebras")
    expect(answers).to_have_text(["Zebras have stripes."], timeout=TIMEOUT)
    expect(page.locator("#title")).to_have_text("Tell me about zebras", timeout=TIMEOUT)  # its first words
    page.locator(".msg.user").get_by_role("button", name="Edit your message").click()
    editor = page.locator(".msg.user .editor textarea")
    editor.fill("Tell me about quokkas")
    editor.press("Enter")
    expect(answers).to_have_text(["Quokkas smile a lot."], timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    # A title made of the first message's words follows that message's edit (one the person typed never would).
    expect(page.locator("#title")).to_have_text("Tell me about quokkas", timeout=TIMEOUT)
    expect(search_results(page, "quokkas")).to_have_text(["Tell me about quokkas"], timeout=TIMEOUT)
    # The old words are only in the version put aside: the chat as it reads now does not say them.
    expect(search_results(page, "zebras")).to_have_count(0, timeout=TIMEOUT)
    expect(page.locator("#chats .hint")).to_have_text("No chat matches that search")

    page.fill("#search", "")
    page.locator(".msg.assistant").get_by_role("button", name="Another answer").click()
    expect(answers).to_have_text(["Quokkas live on Rottnest."], timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    expect(search_results(page, "rottnest").locator(".snippet")).to_contain_text("Rottnest", timeout=TIMEOUT)
    expect(search_results(page, "smile a lot")).to_have_count(0, timeout=TIMEOUT)

    page.fill("#search", "")
    page.locator(".msg.user").get_by_role("button", name="Previous version").click()  # the zebras again
    expect(answers).to_have_text(["Zebras have stripes."], timeout=TIMEOUT)
    expect(page.locator("#title")).to_have_text("Tell me about zebras", timeout=TIMEOUT)
    expect(search_results(page, "stripes").locator(".snippet")).to_contain_text("stripes", timeout=TIMEOUT)
    expect(search_results(page, "quokkas")).to_have_count(0, timeout=TIMEOUT)


def test_the_list_says_which_chat_waits_for_an_approval_beside_its_title(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    long = "Please make the file for the quarterly planning notes of the whole team"
    anthropic_server.script(
        wire.message(wire.tool_use("bash", {"command": "touch notes.txt"}, id="tb")), wire.reply_text("Made.")
    )
    send(page, long)
    expect(page.locator(".permission-card")).to_be_visible(timeout=TIMEOUT)
    page.click("#new-chat")  # elsewhere: only the list can say that chat waits for the person
    entry = page.locator("#chats li.chat").first
    expect(entry).to_have_class(re.compile(r"\bwaiting\b"), timeout=TIMEOUT)
    state = entry.locator(".chat-state")
    expect(state).to_be_visible()  # beside the title, not cut off with it
    expect(state).to_have_attribute("title", "Waiting for your approval")
    expect(entry.get_by_role("button", name=re.compile(r"\(Waiting for your approval\)$"))).to_have_count(1)
    # Both edges read from one layout (the list may be redrawn between two reads: the mark, read alone, was gone).
    edges = page.wait_for_function(
        """() => { const mark = document.querySelector('#chats li.chat .chat-state');
                   return mark && [mark.getBoundingClientRect().right, document.querySelector('#chats')
                     .getBoundingClientRect().right]; }"""
    ).json_value()
    assert edges[0] <= edges[1], edges
    entry.locator("button.chat-open").click()
    page.locator(".permission-card button.allow_once").click()
    expect(page.locator(".msg.assistant .markdown").last).to_have_text("Made.", timeout=TIMEOUT)
    expect(entry.locator(".chat-state")).to_have_count(0, timeout=TIMEOUT)  # nothing runs or waits any more


def test_a_search_result_opens_from_its_snippet_as_from_its_title(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(wire.reply_text("Otters hold hands while they sleep."))
    send(page, "Tell me about otters")
    expect(page.locator(".msg.assistant .markdown")).to_contain_text("Otters hold hands", timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    page.click("#new-chat")
    expect(page.locator("#title")).to_have_text("New chat")
    snippet = search_results(page, "hold hands").locator(".snippet")
    expect(snippet).to_contain_text("hold hands", timeout=TIMEOUT)
    snippet.click()  # the words that matched: the whole result opens the chat
    expect(page.locator("#title")).to_have_text("Tell me about otters", timeout=TIMEOUT)
    expect(page.locator("#find-count")).to_have_text("1 of 1", timeout=TIMEOUT)  # at the match, as the title does

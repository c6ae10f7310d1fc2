"""Journeys a person walks on the phone view, each end to end in a real browser at 390×844 with touch
against a real `orkas serve --mirror` and the wire-level fake model (issue 35): what is typed is what is
sent, Back goes back to the list, a reload stays where it is, a new user starts a chat on the phone with
every target big enough for a thumb. No test waits a fixed time for the app."""

from __future__ import annotations

import json
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.mirror_helpers import Mirrored, restart_mirrored, start_again, stop_mirrored
from tests.ui.test_phone import (
    COMPOSER,
    ICON,
    PHONE,
    RECORDER,
    THUMB,
    icon,
    semantics,
    thumb_sized,
    type_into,
    wait_text,
)

IN_A_CHAT = "Message (use @ to address an agent)"  # what a conversation's screen shows, and the list's does not


def said(server: FakeServer) -> list[str]:
    """The person's words in each request the model got (its last message's text)."""
    texts = []
    for request in server.requests:
        body = json.loads(request.body)
        content = body["messages"][-1]["content"]
        texts.append(content if isinstance(content, str) else " ".join(b.get("text", "") for b in content))
    return texts


@pytest.fixture
def phone(browser: Any, mirrored: Mirrored) -> Iterator[Callable[[], Any]]:
    """Pairs a phone with the app when called; its page, on the conversation list."""
    pages: list[tuple[Any, list[str]]] = []

    def pair() -> Any:
        page, errors = paired(browser, mirrored)
        pages.append((page, errors))
        return page

    yield pair
    for page, errors in pages:
        page.context.close()
        assert not errors, errors


def paired(browser: Any, mirrored: Mirrored) -> tuple[Any, list[str]]:
    pairing = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()
    context = browser.new_context(ignore_https_errors=True, **PHONE)
    context.add_init_script(RECORDER)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors  # a journey through a restart forgives what the page threw while Orkas was down
    page.goto(pairing["link"])
    semantics(page)
    wait_text(page, "Pair this phone")
    page.get_by_role("button", name="Pair").click()
    wait_text(page, "Conversations")
    return page, errors


def test_what_is_typed_is_what_is_sent_however_fast_send_is_tapped(
    phone: Callable[[], Any], mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(wire.reply_text("Once upon a time."))
    mirrored.desktop("POST", "/api/conversations", {"title": "Stories"})
    page = phone()
    page.get_by_text("Stories").click()
    type_into(page, COMPOSER, "Tell me a slow story please")  # tap, wait for the keyboard, type...
    icon(page, "Send").tap()  # ...and Send at once, as a thumb does
    wait_text(page, "Once upon a time.")
    assert said(anthropic_server) == ["Tell me a slow story please"]


def opened(page: Any, title: str) -> None:
    """Tap a chat in the list and wait until it is on screen and in the address bar (a reload reads it there)."""
    page.get_by_text(title).click()
    wait_text(page, IN_A_CHAT)
    page.wait_for_url("**#/chat/*", timeout=20_000)


def in_garden(phone: Callable[[], Any], mirrored: Mirrored) -> Any:
    """A paired phone open on "Garden", with "Taxes" in the list too."""
    for title in ("Garden", "Taxes"):
        mirrored.desktop("POST", "/api/conversations", {"title": title})
    page = phone()
    opened(page, "Garden")
    return page


def test_back_goes_back_to_the_list_and_a_reload_stays_where_it_is(
    phone: Callable[[], Any], mirrored: Mirrored
) -> None:
    page = in_garden(phone, mirrored)
    icon(page, "Back").click()  # the app's ←
    wait_text(page, "Conversations")
    page.wait_for_url(re.compile(r"/m/(#/?)?$"), timeout=20_000)
    page.reload()  # a reload stays on the list
    semantics(page)
    wait_text(page, "Conversations")
    opened(page, "Taxes")  # the first tap after a reload (it queued for good behind an unanswered push_route)
    page.reload()  # a reload in a chat reopens that chat
    semantics(page)
    wait_text(page, IN_A_CHAT)
    assert page.get_by_text("Taxes").count() >= 1


def test_the_browser_s_back_and_forward_move_between_the_list_and_chats(
    phone: Callable[[], Any], mirrored: Mirrored
) -> None:
    page = in_garden(phone, mirrored)
    page.wait_for_url("**#/chat/*", timeout=20_000)  # the address says where the person is
    page.go_back()  # the browser's (or the phone's) Back
    wait_text(page, "Conversations")
    page.go_forward()
    wait_text(page, IN_A_CHAT)
    assert page.get_by_text("Garden").count() >= 1
    page.go_back()
    wait_text(page, "Conversations")
    opened(page, "Taxes")
    page.reload()  # a reload keeps the chat, and Back still leads to the list
    semantics(page)
    wait_text(page, IN_A_CHAT)
    assert page.get_by_text("Taxes").count() >= 1
    page.go_back()
    wait_text(page, "Conversations")


def session_of(page: Any) -> str | None:
    """The Flet session the page is in (its client keeps the id in sessionStorage); None mid-navigation."""
    try:
        return page.evaluate("sessionStorage.getItem('_flet_session_id')")  # type: ignore[no-any-return]
    except Exception:  # the page is navigating: its context is gone
        return None


def rejoined(page: Any, before: str | None, timeout: float = 40) -> None:
    """Wait until the page is in another session than `before`, then read it as a screen reader does."""
    deadline = time.time() + timeout
    while session_of(page) in (None, before):
        assert time.time() < deadline, "the page never joined a new session"
        time.sleep(0.1)
    semantics(page)


def test_after_orkas_restarts_the_open_tab_rejoins_and_a_reload_too(
    phone: Callable[[], Any], mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(wire.reply_text("Before the restart."), wire.reply_text("After the restart."))
    mirrored.desktop("POST", "/api/conversations", {"title": "Garden"})
    page = phone()
    page.get_by_text("Garden").click()
    type_into(page, COMPOSER, "first")
    icon(page, "Send").tap()
    wait_text(page, "Before the restart.")
    before = session_of(page)
    restart_mirrored(mirrored, anthropic_server)
    rejoined(page, before)  # the tab reloads itself into a new session (a person does nothing)
    page.errors.clear()  # Flet's client throws on each reconnect attempt while Orkas is down: not ours
    wait_text(page, "Before the restart.")  # back in the chat it showed
    type_into(page, COMPOSER, "second")
    icon(page, "Send").tap()
    wait_text(page, "After the restart.", timeout=40)
    page.reload()
    semantics(page)
    wait_text(page, "After the restart.")
    assert said(anthropic_server)[-1] == "second"


def test_while_orkas_is_away_the_phone_says_so_in_its_language_and_the_list_comes_back(
    browser: Any, mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    mirrored.desktop("POST", "/api/conversations", {"title": "Garden"})
    context = browser.new_context(ignore_https_errors=True, locale="pt-BR", **PHONE)
    page = context.new_page()
    pairing = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()
    page.goto(pairing["link"])
    semantics(page)
    wait_text(page, "Emparelhar este telemóvel")
    page.get_by_role("button", name="Emparelhar").click()
    wait_text(page, "Garden")
    stop_mirrored(mirrored)  # Orkas quits (or the Wi-Fi goes): Flet's client alone would say "Working…"
    notice = page.get_by_role("alert")
    notice.get_by_text("Não é possível chegar ao computador").wait_for(timeout=20_000)
    assert notice.get_by_text("O Orkas continua a tentar").count() == 1
    notice.get_by_text("Talvez o Orkas tenha sido fechado no computador").wait_for(timeout=30_000)  # it stays away
    start_again(mirrored, anthropic_server)
    notice.wait_for(state="detached", timeout=40_000)
    semantics(page)
    wait_text(page, "Garden", timeout=40)
    context.close()


# The phone in a pocket: its page hidden, notifications allowed. What the system would show is recorded.
NOTIFIED = """() => {
  window.__notified = [];
  Object.defineProperty(document, "visibilityState", { get: () => "hidden" });
  const shown = (title, options) => window.__notified.push([title, options?.body ?? "", options?.tag ?? ""]);
  window.Notification = class { static permission = "granted"; constructor(title, options) { shown(title, options); } };
  const registration = window.ServiceWorkerRegistration?.prototype;
  if (registration) registration.showNotification = async (title, options) => shown(title, options);
  const Native = window.WebSocket;  // the alerts socket, once open: what is said from then on reaches the phone
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      super(url, protocols);
      if (String(url).includes("/alerts")) this.addEventListener("open", () => { window.__listening = true; });
    }
  };
}"""


def test_the_phone_is_notified_in_its_language_when_an_approval_waits_and_when_the_run_ends(
    browser: Any, mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(
        wire.message(wire.tool_use("bash", {"command": "rm -rf build"}, id="toolu_rm")),
        wire.reply_text("Pasta limpa."),
    )
    chat = mirrored.desktop("POST", "/api/conversations", {"title": "Garden"}).json()["id"]
    context = browser.new_context(ignore_https_errors=True, locale="pt-BR", **PHONE)
    context.add_init_script(script=f"({NOTIFIED})()")
    page = context.new_page()
    pairing = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()
    page.goto(pairing["link"])
    semantics(page)
    page.get_by_role("button", name="Emparelhar").click()
    wait_text(page, "Garden")
    page.wait_for_function("() => window.__listening === true", timeout=20_000)
    assert mirrored.desktop("POST", f"/api/conversations/{chat}/messages", {"text": "limpa"}).status_code == 202
    page.wait_for_function("() => window.__notified.length >= 1", timeout=20_000)
    title, body, question = page.evaluate("window.__notified[0]")
    assert title == "Aprovação à espera" and "rm -rf build" in body  # the phone's words, from strings.py
    answered = {"question_id": question, "decision": "allow_once"}
    assert mirrored.desktop("POST", f"/api/conversations/{chat}/answers", answered).status_code == 200
    page.wait_for_function("() => window.__notified.some(([title]) => title === 'Terminado')", timeout=20_000)
    assert ["Terminado", "Pasta limpa."] in [n[:2] for n in page.evaluate("window.__notified")]
    context.close()


@pytest.mark.parametrize("quit_by", [signal.SIGINT, signal.SIGTERM])
def test_orkas_quits_quietly_while_a_phone_is_open(
    phone: Callable[[], Any], mirrored: Mirrored, quit_by: signal.Signals
) -> None:
    mirrored.desktop("POST", "/api/conversations", {"title": "Garden"})
    page = phone()
    opened(page, "Garden")  # the view's session and the alerts socket are both open
    mirrored.process.send_signal(quit_by)  # Ctrl+C in the terminal, or the system stopping it
    _, stderr = mirrored.process.communicate(timeout=30)
    assert mirrored.process.returncode == 0, stderr
    assert "Traceback" not in stderr and "ERROR" not in stderr, stderr  # nor a shutdown past its grace period
    page.context.close()
    page.errors.clear()  # Flet's client threw on each reconnect attempt once Orkas was gone: not ours


def test_after_a_restart_under_an_open_phone_the_mirror_stops_quietly_and_at_once(
    phone: Callable[[], Any], mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    # The view that rejoins after a restart first offers the session the old process held: closed as stale, Flet's
    # handler for it waited for ever (a CancelledError traceback on quitting). And the browser's idle kept-alive
    # connections, closed politely over TLS, held the server for its whole grace period (an ERROR line, ~3.5 s).
    mirrored.desktop("POST", "/api/conversations", {"title": "Garden"})
    page = phone()
    opened(page, "Garden")
    restart_mirrored(mirrored, anthropic_server)
    semantics(page)
    wait_text(page, IN_A_CHAT, timeout=40)  # rejoined, where it was
    started = time.monotonic()
    assert mirrored.desktop("POST", "/api/mirror", {"enabled": False}).status_code == 200  # off, a phone open
    turned_off = time.monotonic() - started
    assert mirrored.desktop("POST", "/api/mirror", {"enabled": True}).status_code == 200
    semantics(page)
    wait_text(page, IN_A_CHAT, timeout=40)  # and back
    started = time.monotonic()
    mirrored.process.send_signal(signal.SIGINT)
    _, stderr = mirrored.process.communicate(timeout=30)
    quitting = time.monotonic() - started
    page.context.close()
    page.errors.clear()  # Flet's client threw while the mirror was away: not ours
    assert mirrored.process.returncode == 0, stderr
    # A server that waits out its grace period says so (uvicorn's ERROR "timeout graceful shutdown exceeded"): its
    # absence, not a time (a loaded machine is slow either way), is what says nothing held it.
    assert "Traceback" not in stderr and "ERROR" not in stderr, (turned_off, quitting, stderr)


@pytest.mark.parametrize(
    ("locale", "family", "title", "pair"),
    [
        ("en-US", "notosanssymbols", "Pair this phone", "Pair"),
        ("zh-CN", "notosanssc", "配对这部手机", "配对"),  # in Chinese the engine asks "Noto Sans SC" for the arrows
    ],
)
def test_the_phone_view_loads_everything_from_this_computer_and_draws_its_symbols(
    browser: Any, mirrored: Mirrored, locale: str, family: str, title: str, pair: str
) -> None:
    """Flutter's engine asked a CDN for Rive's runtime (blocked by the page's own policy: a console error, and a
    request that told the network) and Google's font CDN path for its symbols font (a 404 here: arrows as boxes)."""
    pairing = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()
    context = browser.new_context(ignore_https_errors=True, locale=locale, **PHONE)
    page = context.new_page()
    problems: list[Any] = []
    fonts: list[int] = []
    own = mirrored.mirror.split("://")[1]
    page.on("request", lambda r: problems.append(("outside", r.url)) if own not in r.url else None)
    page.on("response", lambda r: problems.append((r.status, r.url)) if r.status >= 400 else None)
    page.on("response", lambda r: fonts.append(r.status) if f"/assets/fonts/{family}/" in r.url else None)
    page.on("console", lambda m: problems.append((m.type, m.text)) if m.type == "error" else None)
    try:
        page.goto(pairing["link"])
        semantics(page)
        wait_text(page, title)  # its "Settings → Phone" has an arrow: the symbols font is asked for
        page.get_by_role("button", name=pair).click()
        wait_text(page, "Conversations" if locale == "en-US" else "对话")
        assert fonts and set(fonts) == {200}
        assert not problems, problems
    finally:
        context.close()


IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.5 Mobile/15E148 Safari/604.1"
)  # Flutter still lays out for a desktop here (it reads navigator.platform, Linux): sizes must not rely on it


def test_a_new_user_starts_a_chat_on_the_phone_retries_approves_knowing_the_risk_and_sees_the_photo(
    browser: Any, mirrored: Mirrored, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    """Issue 35 §5, as a new user at 390×844 with touch: every target fits a thumb, tooltips never stay over the
    composer, and what was missing is there — a new chat, Retry, the approval's risk, the photo, a device name."""
    overloaded = wire.error(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"})
    anthropic_server.script(
        *[overloaded] * 4,  # the first message fails, after the engine's own tries
        wire.reply_text("Hello after the retry."),
        wire.message(wire.tool_use("bash", {"command": "rm -rf build"}, id="toolu_rm")),  # asks first
        wire.reply_text("Cleaned the build folder."),
        wire.reply_text("A fine icon."),
    )
    photo = tmp_path / "photo.png"
    photo.write_bytes(ICON.read_bytes())
    pairing = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()
    context = browser.new_context(ignore_https_errors=True, user_agent=IPHONE, **PHONE)
    context.add_init_script(RECORDER)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(pairing["link"])
        semantics(page)
        wait_text(page, "Pair this phone")
        pair = page.get_by_role("button", name="Pair")
        thumb_sized(pair)
        pair.tap()  # the name is left as the phone filled it in
        wait_text(page, "Conversations")
        assert [d["name"] for d in mirrored.desktop("GET", "/api/mirror/devices").json()] == ["iPhone (Safari)"]

        # A new chat, from the phone.
        new_chat = page.get_by_role("button", name="New chat")
        for target in (new_chat, icon(page, "Refresh"), icon(page, "Light or dark")):
            thumb_sized(target)
        new_chat.tap()
        wait_text(page, IN_A_CHAT)
        assert mirrored.desktop("GET", "/api/conversations").json() == []  # made by its first message
        for name in ("Back", "Refresh", "Attach a photo or file", "Send"):
            thumb_sized(icon(page, name))

        # Its first message fails; Retry sends it again. (Send is clicked: a tap the browser reports as a pointer
        # that hovers, as a stylus's or a trackpad's does — its tooltip stayed up over the composer.)
        type_into(page, COMPOSER, "hello there")
        icon(page, "Send").click()
        retry = page.get_by_role("button", name="Retry")
        thumb_sized(retry)
        assert icon(page, "Send").count() == 1, "a tooltip is still up over the composer"
        retry.tap()
        wait_text(page, "Hello after the retry.")
        assert said(anthropic_server)[-1] == "hello there"
        assert len(mirrored.desktop("GET", "/api/conversations").json()) == 1
        assert page.get_by_role("button", name="Retry").count() == 0  # the failed try is the other version now

        # An approval says how risky it is; its buttons, and Stop (away from Refresh), fit a thumb.
        type_into(page, COMPOSER, "clean the build")
        icon(page, "Send").tap()
        wait_text(page, "bash asks for permission")
        wait_text(page, "Medium risk: changes the workspace · deletes files")
        answers = [page.get_by_role("button", name=n) for n in ("Allow once", "Allow this run", "Deny")]
        for target in answers:
            thumb_sized(target)
        stop, refresh = thumb_sized(page.get_by_role("button", name="Stop")), thumb_sized(icon(page, "Refresh"))
        assert stop["y"] >= refresh["y"] + refresh["height"] + THUMB, (stop, refresh)  # not side by side
        answers[0].tap()
        wait_text(page, "Cleaned the build folder.")

        # A photo sent from the phone shows as a thumbnail in the transcript.
        with page.expect_file_chooser() as chooser:
            icon(page, "Attach a photo or file").tap()
        chooser.value.set_files(str(photo))
        wait_text(page, "Attached photo.png")
        type_into(page, COMPOSER, "what is this?")
        icon(page, "Send").tap()
        wait_text(page, "A fine icon.")
        thumbnail = page.get_by_role("img", name="Photo photo.png")
        thumbnail.wait_for()
        box = thumbnail.bounding_box()
        assert box is not None and box["width"] >= 100 and box["height"] >= 100, box
    finally:
        context.close()
    assert not errors, errors


def test_a_new_chat_left_blank_leaves_nothing_and_its_first_message_makes_it_named(
    phone: Callable[[], Any], mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(wire.reply_text("Tomatoes first."))
    page = phone()
    page.get_by_role("button", name="New chat").tap()
    wait_text(page, IN_A_CHAT)
    wait_text(page, "Untitled chat")
    assert mirrored.desktop("GET", "/api/conversations").json() == []  # a blank page, as on the desktop
    icon(page, "Back").tap()
    wait_text(page, "No conversations yet")
    assert mirrored.desktop("GET", "/api/conversations").json() == []  # left blank: nothing behind, anywhere

    page.get_by_role("button", name="New chat").tap()
    type_into(page, COMPOSER, "plan my garden")
    icon(page, "Send").tap()
    wait_text(page, "Tomatoes first.")
    page.wait_for_url("**#/chat/*", timeout=20_000)  # the chat now, at its own address
    assert [c["title"] for c in mirrored.desktop("GET", "/api/conversations").json()] == ["plan my garden"]
    page.get_by_text("Untitled chat").wait_for(state="detached", timeout=20_000)  # the header has its title


def test_a_connector_waiting_for_a_sign_in_is_said_over_the_phone_s_list(
    phone: Callable[[], Any], mirrored: Mirrored
) -> None:
    """A hosted server that signs in with OAuth and has no sign-in: the phone says so over its list (signing in
    happens on the computer, where the browser comes back to), still there after a chat and Back."""
    added = mirrored.desktop(
        "POST", "/api/connectors", {"name": "Vendor", "url": "http://127.0.0.1:9/mcp", "oauth": True}
    )
    assert added.status_code == 200, added.text
    mirrored.desktop("POST", "/api/conversations", {"title": "Garden"})
    page = phone()
    wait_text(page, "Vendor needs you to sign in — on the computer: Settings → Connectors → Sign in.")
    opened(page, "Garden")
    page.go_back()
    wait_text(page, "Vendor needs you to sign in")

"""The phone view (Flet, web mode) in a real browser at a phone's size and touch, against a real
`orkas serve --mirror` and the wire-level fake model: pair, open a conversation while it streams, send,
approve a dangerous command, stop, and carry on after the mirror drops every socket."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

from tests.fakes import anthropic as wire
from tests.fakes.routing import ByActor, parallel_dispatch
from tests.fakes.server import FakeServer, Reply
from tests.mirror_helpers import Mirrored

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
# What the page does that only a phone shows: vibrations, notifications, requests leaving the machine.
RECORDER = """
window.vibrations = [];
navigator.vibrate = (pattern) => { window.vibrations.push(pattern); return true; };
window.notes = [];
window.Notification = class {
  constructor(title, options) { window.notes.push(`${title}: ${options?.body ?? ""}`); }
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
};
if (navigator.serviceWorker) navigator.serviceWorker.getRegistration = () => Promise.resolve(undefined);
Object.defineProperty(document, "visibilityState", { get: () => (window.hidden_for_test ? "hidden" : "visible") });
"""
ICON = Path(__file__).resolve().parents[2] / "app" / "orkas" / "phone" / "assets" / "icons" / "icon-192.png"


def slow_text(value: str, delay: float, release: threading.Event | None = None) -> Reply:
    """A reply streamed word by word, `delay` seconds between events (five events a word); with
    `release`, its first half streams and the rest waits until the test sets it."""
    reply = wire.message(*(wire.text(word + " ") for word in value.split()))
    reply.event_delay = delay
    if release is not None:
        reply.release, reply.hold_after = release, len(reply.events) // 2
    return reply


def semantics(page: Any) -> None:
    """Flutter draws on a canvas: its accessibility tree is what a test (and a screen reader) reads."""
    page.wait_for_selector("flutter-view", timeout=30_000)
    page.wait_for_selector("flt-semantics-placeholder", state="attached", timeout=30_000)
    page.evaluate("document.querySelector('flt-semantics-placeholder')?.click()")


COMPOSER = "Message (use @ to address an agent)"


def type_into(page: Any, label: str, text: str) -> None:
    """Type as a person does: tap the field, wait for the keyboard (Flutter's input element takes focus a
    moment after the tap; keys before that go nowhere, as on a phone), then type. No wait after: each
    keystroke travels to Flet's session before a later tap does (the fields have on_change)."""
    for _ in range(3):
        page.get_by_role("textbox", name=label).tap()
        if not became(page, FOCUSED, timeout=8):
            continue  # the tap landed on a field a redraw replaced (a loaded machine): the person taps again
        page.keyboard.press("Control+A")
        page.keyboard.type(text)
        # Typed into the field that still has the focus: on a loaded machine a redraw as the chat finished loading
        # took the focus mid-word (the keys went nowhere, as they would on a slow phone); the person taps again.
        if page.evaluate("document.activeElement?.value ?? null") == text:
            return
    raise AssertionError(f"could not type {text!r} into {label!r}")


# A text field's editing element: not the file picker's input, which keeps the focus after a photo is chosen (under
# load the tap had not moved it yet, the keys went to the picker, and the message was never typed).
FOCUSED = (
    "document.activeElement?.tagName === 'TEXTAREA' || "
    "(document.activeElement?.tagName === 'INPUT' && document.activeElement.type !== 'file')"
)


def became(page: Any, expression: str, timeout: float) -> bool:
    """Whether a page expression turns true within `timeout` seconds."""
    deadline = time.time() + timeout
    while not page.evaluate(expression):
        if time.time() >= deadline:
            return False
        page.wait_for_timeout(100)
    return True


def until(page: Any, expression: str, timeout: float = 20) -> None:
    """Poll a page expression (wait_for_function would eval a string, which the view's CSP forbids)."""
    deadline = time.time() + timeout
    while not page.evaluate(expression):
        assert time.time() < deadline, f"never true: {expression}"
        page.wait_for_timeout(100)


def icon(page: Any, name: str) -> Any:
    """An icon button, by its tooltip (Flutter labels the tooltip's node, around the button)."""
    return page.get_by_label(name, exact=True)


THUMB = 48  # px: the smallest target a fingertip hits reliably (Material's and Apple's guidance)


def thumb_sized(target: Any, timeout: float = 10) -> dict[str, float]:
    """`target`'s box once it is shown and still (a screen sliding in is measured where it lands): at least
    THUMB on each side."""
    target.wait_for()
    deadline = time.time() + timeout
    before, box = None, target.bounding_box()
    while box is None or box != before:  # no box: drawn again meanwhile (a list of names redrawn as typed)
        assert time.time() < deadline, f"never still: {box}"
        target.page.wait_for_timeout(50)  # one frame or so between two reads of a moving box
        before, box = box, target.bounding_box()
    assert box is not None and box["width"] >= THUMB and box["height"] >= THUMB, box
    return box  # type: ignore[no-any-return]


def wait_text(page: Any, text: str, timeout: float = 20) -> None:
    """Shown text: a node's own text, or its label when Flutter merged a card's lines into one node."""
    found = page.get_by_text(text, exact=False).or_(page.get_by_label(text, exact=False))
    found.first.wait_for(timeout=timeout * 1000)


def test_a_phone_pairs_watches_sends_approves_stops_and_reconnects(
    browser: Any, mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    words = " ".join(f"word{i}" for i in range(40))
    story = " ".join(f"line{i}" for i in range(200))
    halfway = threading.Event()
    anthropic_server.script(
        slow_text(f"Streaming {words} end.", 0.01, release=halfway),  # the reply the phone joins halfway
        wire.message(wire.tool_use("bash", {"command": "rm -rf build"}, id="toolu_rm")),  # asks first
        wire.reply_text("Cleaned the build folder."),
        slow_text(
            f"Once upon a time {story}", 0.01, release=threading.Event()
        ),  # stopped from the phone, never released
        wire.reply_text("Back after the drop."),  # finished while the mirror was off
    )
    chat = mirrored.desktop("POST", "/api/conversations", {"title": "Garden plan"}).json()["id"]
    assert mirrored.desktop("POST", f"/api/conversations/{chat}/messages", {"text": "plan it"}).status_code == 202
    pairing = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()

    context = browser.new_context(ignore_https_errors=True, **PHONE)
    context.add_init_script(RECORDER)
    page = context.new_page()
    outside: list[str] = []  # requests that reached the network for anywhere but this computer's mirror

    def leaving(route: Any) -> None:
        outside.append(route.request.url)
        route.abort()

    page.route(lambda url: not url.startswith((mirrored.mirror, "blob:", "data:")), leaving)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        # Pair: the link in the QR code fills the code in; the phone names itself.
        page.goto(pairing["link"])
        semantics(page)
        wait_text(page, "Pair this phone")
        wait_text(page, pairing["fingerprint"][:20])
        type_into(page, "Name of this phone", "Test phone")
        page.get_by_role("button", name="Pair").click()
        wait_text(page, "Garden plan")
        assert [d["name"] for d in mirrored.desktop("GET", "/api/mirror/devices").json()] == ["Test phone"]

        # Open it while it streams: what was said so far, then live to the end.
        page.get_by_text("Garden plan").click()
        wait_text(page, "Streaming")
        page.get_by_role("button", name="Stop").wait_for(state="visible", timeout=20_000)  # joined while it ran
        assert page.get_by_text("end.").count() == 0
        halfway.set()
        wait_text(page, "end.")

        # Send; the model wants to run a dangerous command: the phone approves it, once.
        type_into(page, COMPOSER, "clean the build")
        icon(page, "Send").click()
        wait_text(page, "bash asks for permission")
        wait_text(page, "rm -rf build")
        page.get_by_role("button", name="Allow once").click()
        wait_text(page, "Allowed once on Test phone")  # which allow, as the desktop says it
        wait_text(page, "Cleaned the build folder.")
        assert page.evaluate("window.vibrations.length") >= 1  # the approval buzzed

        # Stop a long answer from the phone.
        type_into(page, COMPOSER, "tell me a long story")
        icon(page, "Send").click()
        wait_text(page, "Once upon a time")
        page.get_by_role("button", name="Stop").click()
        wait_text(page, "Stopped")
        assert not mirrored.desktop("GET", f"/api/conversations/{chat}/messages").json()["running"]

        # The mirror drops every socket (turned off and on); what happened meanwhile arrives after.
        assert not errors  # (while it is off, Flutter's reconnect attempts raise: that is expected)
        assert not outside, f"the phone view reached outside the computer: {outside}"
        assert mirrored.desktop("POST", "/api/mirror", {"enabled": False}).status_code == 200
        sent = mirrored.desktop("POST", f"/api/conversations/{chat}/messages", {"text": "are you there?"})
        assert sent.status_code == 202
        deadline = time.time() + 10
        while mirrored.desktop("GET", f"/api/conversations/{chat}/messages").json()["running"]:
            assert time.time() < deadline
            time.sleep(0.1)
        with page.expect_navigation(timeout=30_000):  # the view rejoins its session as a fresh page
            assert mirrored.desktop("POST", "/api/mirror", {"enabled": True}).status_code == 200
        semantics(page)
        wait_text(page, "Back after the drop.", timeout=30)
        wait_text(page, "are you there?")
    finally:
        context.close()
    assert not outside, f"the phone view reached outside the computer: {outside}"


def test_in_chinese_dark_a_photo_goes_up_it_notifies_when_hidden_and_a_revoke_unpairs(
    browser: Any, mirrored: Mirrored, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    anthropic_server.script(wire.reply_text("收到照片。"), wire.reply_text("好的。"))
    chat = mirrored.desktop("POST", "/api/conversations", {"title": "花园计划"}).json()["id"]
    pairing = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()
    photo = tmp_path / "photo.png"
    photo.write_bytes(ICON.read_bytes())

    context = browser.new_context(ignore_https_errors=True, locale="zh-CN", **PHONE)
    context.add_init_script(RECORDER)
    page = context.new_page()
    fonts: list[int] = []
    page.on("response", lambda r: fonts.append(r.status) if r.url.endswith("/fonts/cjk.ttf") else None)
    try:
        page.goto(pairing["link"])
        semantics(page)
        wait_text(page, "配对这部手机")
        page.get_by_role("button", name="配对").click()
        wait_text(page, "花园计划")
        assert fonts == [200]  # the bundled CJK font: Chinese is text, not boxes

        icon(page, "浅色或深色").click()
        until(page, "localStorage.getItem('flutter.orkas.theme') !== null")
        theme = page.evaluate("localStorage.getItem('flutter.orkas.theme')")
        assert theme in ('"dark"', '"light"')  # remembered on the phone, not the computer

        page.get_by_text("花园计划").click()
        # The words first, then the photo: after the system's file picker the browser kept the focus on its input
        # (a tap on the field then took it only now and then, on a loaded machine), which no phone has.
        type_into(page, "消息（用 @ 指定智能体）", "看看这个")
        with page.expect_file_chooser() as chooser:
            icon(page, "附加照片或文件").click()
        chooser.value.set_files(str(photo))
        wait_text(page, "已附加 photo.png")
        icon(page, "发送").click()
        wait_text(page, "收到照片。")
        sent = anthropic_server.requests[0].json["messages"][-1]["content"]
        assert any(block["type"] == "image" for block in sent)  # the photo reached the model as an image
        assert not list((mirrored.home / "mirror" / "uploads").iterdir())  # nothing left behind

        page.evaluate("window.hidden_for_test = true")  # the phone is in a pocket
        mirrored.desktop("POST", f"/api/conversations/{chat}/messages", {"text": "再来"})
        until(page, "window.notes.length > 0")
        assert page.evaluate("window.notes")[0].startswith("已完成")

        device = mirrored.desktop("GET", "/api/mirror/devices").json()[0]["id"]
        assert mirrored.desktop("DELETE", f"/api/mirror/devices/{device}", {}).status_code == 204
        wait_text(page, "这部手机已在电脑上取消配对")
        until(page, "localStorage.getItem('flutter.orkas.device_token') === null")
    finally:
        context.close()


def test_a_group_on_the_phone_shows_each_agent_and_offers_its_members(
    browser: Any, mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    markers = {"coder": "CODER-BOT", "critic": "CRITIC-BOT", "commander": "commander of a team"}
    router = ByActor(markers)
    parallel_dispatch(router)
    router.add("coder", slow_text("code from the coder", 0.05))
    router.add("critic", slow_text("review from the critic", 0.05))
    anthropic_server.script(*[router] * router.total)
    for name in ("coder", "critic"):
        made = {"name": name, "description": f"the {name}", "prompt": f"You are {markers[name]}."}
        assert mirrored.desktop("POST", "/api/agents", made).status_code == 201
    chat = mirrored.desktop("POST", "/api/conversations", {"title": "Team"}).json()["id"]
    members = mirrored.desktop("PUT", f"/api/conversations/{chat}/members", {"members": ["coder", "critic"]})
    assert members.status_code == 200, members.text
    pairing = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()

    context = browser.new_context(ignore_https_errors=True, **PHONE)
    page = context.new_page()
    try:
        page.goto(pairing["link"])
        semantics(page)
        page.get_by_role("button", name="Pair").click()
        wait_text(page, "Group: coder, critic")  # the list says it is a group, and whose
        page.get_by_text("Team").click()
        type_into(page, COMPOSER, "@c")
        thumb_sized(page.get_by_label("@coder", exact=True))  # a name offered after @ fits a thumb
        wait_text(page, "@critic")
        type_into(page, COMPOSER, "build and review")
        icon(page, "Send").click()
        wait_text(page, "code from the coder")
        wait_text(page, "review from the critic")
        wait_text(page, "Both are done.")
        labels = page.evaluate(
            "[...document.querySelectorAll('flt-semantics')].map(e => e.getAttribute('aria-label') || e.innerText)"
        )
        for name, said in (("coder", "code from the coder"), ("critic", "review from the critic")):
            # each agent in its own bubble, named above what it said
            assert any(re.match(rf"\s*{name}\s+{said}", label or "") for label in labels), (name, labels)
    finally:
        context.close()

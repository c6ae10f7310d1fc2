"""The phone mirror, end to end: a real `orkas serve --mirror` (TLS on its own port), paired through the
desktop API, driven over HTTPS and a WebSocket as a phone would — and attacked: one test per rule."""

from __future__ import annotations

import asyncio
import hashlib
import json
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets

from orkas.adapter.settings.mirror_devices import MirrorDevices, PairingRefused
from orkas.phone.client import MirrorClient, Target
from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.mirror_helpers import Mirrored, run_mirrored


@pytest.fixture
def mirrored(anthropic_server: FakeServer, tmp_path: Path) -> Iterator[Mirrored]:
    with run_mirrored(anthropic_server, tmp_path) as running:
        yield running


DEADLINE = 60  # seconds: a deadline for what must come, not a timing claim (a busy machine is slow)

ROUTES = [
    ("GET", "/mirror/api/v1/conversations"),
    ("GET", "/mirror/api/v1/conversations/0123456789abcdef0123456789abcdef/messages"),
    ("POST", "/mirror/api/v1/conversations/0123456789abcdef0123456789abcdef/messages"),
    ("POST", "/mirror/api/v1/conversations/0123456789abcdef0123456789abcdef/stop"),
    ("POST", "/mirror/api/v1/conversations/0123456789abcdef0123456789abcdef/answers"),
    ("POST", "/mirror/api/v1/conversations"),
    ("POST", "/mirror/api/v1/conversations/0123456789abcdef0123456789abcdef/messages/m1/regenerate"),
    ("GET", "/mirror/api/v1/conversations/0123456789abcdef0123456789abcdef/attachments/a1"),
]


async def first_close(url: str, context: ssl.SSLContext, **kwargs: Any) -> int | None:
    try:
        async with websockets.connect(url, ssl=context, **kwargs) as socket:
            await asyncio.wait_for(socket.recv(), DEADLINE)
            await asyncio.wait_for(socket.recv(), DEADLINE)
    except websockets.ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None
    except websockets.InvalidStatus as refused:
        return refused.response.status_code
    return None


def test_the_certificate_is_the_one_the_desktop_shows(mirrored: Mirrored) -> None:
    host, port = mirrored.mirror.removeprefix("https://").split(":")
    pem = ssl.get_server_certificate((host, int(port)))
    assert "sha256:" + hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest() == mirrored.fingerprint
    key = mirrored.home / "mirror" / "mirror-key.pem"
    assert key.stat().st_mode & 0o777 == 0o600
    pairing = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()
    assert pairing["fingerprint"] == mirrored.fingerprint and pairing["url"] == mirrored.mirror
    assert pairing["qr"].startswith("data:image/svg+xml") and pairing["expires_at"] - time.time() <= 120
    assert pairing["link"] == f"{mirrored.mirror}/m/#/?pair={pairing['code']}&fp={mirrored.fingerprint}"


def test_unpaired_is_refused_everywhere_and_the_desktop_api_is_not_here(mirrored: Mirrored) -> None:
    for method, path in ROUTES:
        body = {} if method == "POST" else None
        assert mirrored.phone(method, path, body=body).status_code == 401, path
        assert mirrored.phone(method, path, token="not-a-token", body=body).status_code == 401, path
    url = mirrored.mirror.replace("https://", "wss://") + "/mirror/api/v1/events?conversation=x&token=nope"
    assert asyncio.run(first_close(url, mirrored.tls())) in (403, 4401)
    assert mirrored.phone("GET", "/api/status").status_code == 404
    assert mirrored.phone("GET", "/api/conversations", token="x").status_code == 404
    token, _ = mirrored.pair()
    assert mirrored.phone("GET", "/api/settings", token=token).status_code == 404  # paired or not


def test_the_phone_view_is_served_bare_and_its_upload_door_needs_a_signed_url(mirrored: Mirrored) -> None:
    page = mirrored.phone("GET", "/m/")
    assert page.status_code == 200 and "orkas.js" in page.text  # no data in it: no token needed
    assert 'flet.webRenderer="canvaskit"' in page.text  # the one renderer the Linux bundle ships (build/orkas.spec)
    assert 'canvasKitVariant: "full"' in mirrored.phone("GET", "/m/flutter_bootstrap.js").text  # in its one build
    assert "access-control-allow-origin" not in page.headers  # Flet's CORS header is dropped
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert mirrored.phone("GET", "/m/manifest.json").json()["name"] == "Orkas"
    uploads = mirrored.home / "mirror" / "uploads"
    for query in ("", "?f=x.png&e=2099-01-01T00:00:00%2B00:00&s=forged", "?f=../../escape.png&e=2099-01-01&s=x"):
        refused = mirrored.phone(
            "PUT", f"/m/upload{query}", content=b"\x89PNG", headers={"Content-Type": "application/octet-stream"}
        )
        assert refused.status_code in (400, 403), (query, refused.status_code)
    assert not list(uploads.iterdir()) and not (mirrored.home / "escape.png").exists()


def test_the_phone_views_session_socket_is_limited_per_address(mirrored: Mirrored) -> None:
    url = mirrored.mirror.replace("https://", "wss://") + "/m/ws"

    async def open_one() -> int | None:
        try:
            async with websockets.connect(url, ssl=mirrored.tls()):
                return 101
        except websockets.InvalidStatus as refused:
            return refused.response.status_code

    async def open_many() -> list[int | None]:
        return [await open_one() for _ in range(32)]

    opened = asyncio.run(open_many())
    assert opened[:30] == [101] * 30 and set(opened[30:]) == {403}  # a flood of sessions is cut off


def test_codes_work_once_wrong_ones_are_limited_and_nothing_is_logged(mirrored: Mirrored) -> None:
    code = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()["code"]
    first = mirrored.phone("POST", "/mirror/api/v1/pair", body={"code": code, "device_name": "Pixel"})
    assert first.status_code == 200
    token = first.json()["device_token"]
    again = mirrored.phone("POST", "/mirror/api/v1/pair", body={"code": code, "device_name": "Thief"})
    assert again.status_code == 401  # used
    fresh = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()["code"]
    for _ in range(3):  # with the reused code: four wrong ones
        wrong = mirrored.phone("POST", "/mirror/api/v1/pair", body={"code": "WRONGCOD"})
        assert wrong.status_code == 401
    assert mirrored.phone("POST", "/mirror/api/v1/pair", body={"code": "WRONGCOD"}).status_code == 401  # the 5th
    locked = mirrored.phone("POST", "/mirror/api/v1/pair", body={"code": fresh})  # even the right one, for a minute
    assert locked.status_code == 429
    devices = mirrored.desktop("GET", "/api/mirror/devices").json()
    assert [d["name"] for d in devices] == ["Pixel"] and "token_hash" not in devices[0]
    stored = (mirrored.home / "mirror" / "devices.json").read_text()
    assert token not in stored and hashlib.sha256(token.encode()).hexdigest() in stored
    mirrored.process.terminate()
    mirrored.process.communicate(timeout=10)
    logs = "".join(p.read_text(errors="replace") for p in (mirrored.home / "logs").glob("*"))
    assert "paired device" in logs and "wrong or expired code" in logs
    for secret in (code, fresh, token):
        assert secret not in logs


def test_foreign_host_and_origin_are_refused(mirrored: Mirrored) -> None:
    token, _ = mirrored.pair()
    port = mirrored.mirror.rsplit(":", 1)[1]
    assert mirrored.phone("GET", "/mirror/api/v1/conversations", token=token).status_code == 200
    rebound = mirrored.phone(
        "GET", "/mirror/api/v1/conversations", token=token, headers={"Host": f"evil.example:{port}"}
    )
    assert rebound.status_code == 403
    foreign = mirrored.phone(
        "GET", "/mirror/api/v1/conversations", token=token, headers={"Origin": "https://evil.example"}
    )
    assert foreign.status_code == 403
    text = mirrored.phone(
        "POST",
        "/mirror/api/v1/conversations/x/stop",
        token=token,
        content=b"{}",
        headers={"Content-Type": "text/plain"},
    )
    assert text.status_code == 415


def test_a_phone_watches_sends_and_a_revoke_closes_its_open_socket(
    mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(wire.reply_text("Hello from the computer."))
    token, device = mirrored.pair()
    chat = mirrored.desktop("POST", "/api/conversations", {}).json()["id"]
    sent = mirrored.phone("POST", f"/mirror/api/v1/conversations/{chat}/messages", token=token, body={"text": "hi"})
    assert sent.status_code == 202
    deadline = time.time() + 60  # a deadline, not a timing claim: a busy machine runs the turn slowly
    while time.time() < deadline and mirrored.desktop("GET", f"/api/conversations/{chat}/messages").json()["running"]:
        time.sleep(0.1)
    history = mirrored.phone("GET", f"/mirror/api/v1/conversations/{chat}/messages?after=0", token=token).json()
    assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
    assert [e["type"] for e in history["events"]][-2:] == ["done", "idle"]  # the events, for catching up
    listed = mirrored.phone("GET", "/mirror/api/v1/conversations", token=token).json()
    assert listed[0]["id"] == chat and listed[0]["unread"] == 0 and listed[0]["floor"] == "commander"

    async def watch_then_revoke() -> int | None:
        url = mirrored.mirror.replace("https://", "wss://") + f"/mirror/api/v1/events?conversation={chat}&after=0"
        async with websockets.connect(
            url, ssl=mirrored.tls(), additional_headers={"Authorization": f"Bearer {token}"}
        ) as socket:
            hello = json.loads(await asyncio.wait_for(socket.recv(), DEADLINE))
            assert hello["type"] == "hello"
            caught_up = json.loads(await asyncio.wait_for(socket.recv(), DEADLINE))
            assert isinstance(caught_up, list)  # a phone's catch-up comes in arrays of events, in order
            seen = [event["type"] for event in caught_up]
            assert "user_message" in seen and seen[-2:] == ["done", "idle"]
            removed = await asyncio.to_thread(mirrored.desktop, "DELETE", f"/api/mirror/devices/{device}", {})
            assert removed.status_code == 204
            try:
                while True:
                    await asyncio.wait_for(socket.recv(), DEADLINE)
            except websockets.ConnectionClosed as closed:
                return closed.rcvd.code if closed.rcvd else None

    assert asyncio.run(watch_then_revoke()) == 4401
    assert mirrored.phone("GET", "/mirror/api/v1/conversations", token=token).status_code == 401
    assert mirrored.desktop("GET", "/api/mirror/devices").json() == []


def test_phones_joining_mid_stream_each_get_every_event_once_in_order(
    mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    reply = wire.message(*(wire.text(f"w{i} ") for i in range(120)))
    reply.event_delay = 0.01  # a few seconds of deltas: the phones join at different points of it
    anthropic_server.script(reply)
    token, _ = mirrored.pair()
    chat = mirrored.desktop("POST", "/api/conversations", {}).json()["id"]
    url = mirrored.mirror.replace("https://", "wss://") + f"/mirror/api/v1/events?conversation={chat}"
    headers = {"Authorization": f"Bearer {token}"}

    streaming = asyncio.Event()  # the first phone has seen the reply begin

    async def phone(after: int, delay: float) -> list[dict[str, Any]]:
        if delay:
            await streaming.wait()
            await asyncio.sleep(delay)
        events: list[dict[str, Any]] = []
        async with websockets.connect(f"{url}&after={after}", ssl=mirrored.tls(), additional_headers=headers) as ws:
            while not events or events[-1]["type"] != "idle":
                message = json.loads(await asyncio.wait_for(ws.recv(), 15))
                events += [e for e in (message if isinstance(message, list) else [message]) if e["type"] != "hello"]
                if events and events[-1]["seq"] > 5:
                    streaming.set()
        return events

    async def watch() -> list[list[dict[str, Any]]]:
        phones = [asyncio.create_task(phone(0, delay)) for delay in (0.0, 0.5, 1.5)]
        phones.append(asyncio.create_task(phone(5, 0.2)))  # one that had already seen the first five
        await asyncio.to_thread(mirrored.desktop, "POST", f"/api/conversations/{chat}/messages", {"text": "go"})
        return await asyncio.gather(*phones)

    def drawn(events: list[dict[str, Any]]) -> tuple[str, list[tuple[int, str]]]:
        """What a view draws from events: the reply's text, and every other event with its seq."""
        text = "".join(e["text"] for e in events if e["type"] == "text_delta")
        return text, [(e["seq"], e["type"]) for e in events if e["type"] != "text_delta"]

    watched = asyncio.run(watch())
    raw = mirrored.phone("GET", f"/mirror/api/v1/conversations/{chat}/messages?after=0", token=token).json()["events"]
    for events in watched:
        seqs = [e["seq"] for e in events]
        assert seqs == sorted(set(seqs))  # in order, none twice
    first, second, third, resumed = watched
    assert drawn(first) == drawn(raw) and drawn(first)[0] == "".join(f"w{i} " for i in range(120))
    assert drawn(second) == drawn(raw) and drawn(third) == drawn(raw)  # joined later: backlog, then live
    assert drawn(resumed) == drawn([e for e in raw if e["seq"] > 5])
    assert len(first) < len(raw)  # a frame's deltas travel joined


def test_codes_expire_after_two_minutes(tmp_path: Path) -> None:
    now = [1000.0]
    devices = MirrorDevices(tmp_path, clock=lambda: now[0])
    code = devices.start_pairing().code
    now[0] += 121
    with pytest.raises(PairingRefused):
        devices.pair(code, "Late phone")
    fresh = devices.start_pairing().code
    device, token = devices.pair(fresh.lower(), "On time")  # typed in lower case: still the code
    assert devices.authenticate(token) == device and devices.authenticate(token + "x") is None


def test_a_device_is_listed_under_one_plain_line_of_its_name(tmp_path: Path) -> None:
    # A name with a right-to-left override could pass for another phone's in Settings → Phone; a newline split the
    # log line it is written in.
    devices = MirrorDevices(tmp_path)
    names = {
        "evil\u202eenohp s'anA": "evilenohp s'anA",
        "Pixel\n9\r\nPro": "Pixel 9 Pro",
        "\x00\x1b": "Phone",
        "手机": "手机",
    }
    for given, shown in names.items():
        device, _ = devices.pair(devices.start_pairing().code, given)
        assert device.name == shown


def test_an_approval_waits_on_the_phone_and_the_first_answer_wins(
    mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(
        wire.message(wire.tool_use("bash", {"command": "rm -rf build"}, id="toolu_rm")),
        wire.reply_text("Left it alone."),
    )
    token, _ = mirrored.pair("Pixel")
    chat = mirrored.desktop("POST", "/api/conversations", {}).json()["id"]

    async def approve_from_the_phone() -> list[dict[str, Any]]:
        url = mirrored.mirror.replace("https://", "wss://") + "/mirror/api/v1/alerts"
        headers = {"Authorization": f"Bearer {token}"}
        async with websockets.connect(url, ssl=mirrored.tls(), additional_headers=headers) as socket:
            assert json.loads(await asyncio.wait_for(socket.recv(), DEADLINE))["type"] == "hello"
            sent = await asyncio.to_thread(
                mirrored.desktop, "POST", f"/api/conversations/{chat}/messages", {"text": "clean"}
            )
            assert sent.status_code == 202
            question = json.loads(await asyncio.wait_for(socket.recv(), DEADLINE))
            assert question["type"] == "permission_request" and question["conversation"] == chat
            always = await asyncio.to_thread(
                mirrored.phone,
                "POST",
                f"/mirror/api/v1/conversations/{chat}/answers",
                token,
                {"question_id": question["id"], "decision": "always"},
            )
            assert always.status_code == 422  # "always" stays a desktop decision
            denied = await asyncio.to_thread(
                mirrored.phone,
                "POST",
                f"/mirror/api/v1/conversations/{chat}/answers",
                token,
                {"question_id": question["id"], "decision": "deny"},
            )
            assert denied.status_code == 200
            late = await asyncio.to_thread(
                mirrored.desktop,
                "POST",
                f"/api/conversations/{chat}/answers",
                {"question_id": question["id"], "decision": "allow_once"},
            )
            assert late.status_code == 409  # the first answer won, and the late one is told whose it was
            assert {k: late.json()["answered"][k] for k in ("decision", "by")} == {"decision": "deny", "by": "Pixel"}
            # The phone view's own client, late in turn: given the answer that counted, to say in its language.
            phone = MirrorClient(Target(mirrored.mirror, mirrored.home / "mirror" / "mirror-cert.pem"), token)
            try:
                first = await phone.answer(chat, question["id"], "once")
            finally:
                await phone.close()
            assert first is not None and (first["decision"], first["by"]) == ("deny", "Pixel")
            seen = [question]
            while seen[-1]["type"] != "done":
                seen.append(json.loads(await asyncio.wait_for(socket.recv(), DEADLINE)))
            return seen

    seen = asyncio.run(approve_from_the_phone())
    answer = next(e for e in seen if e["type"] == "permission_answered")
    assert answer["decision"] == "deny" and answer["by"] == "Pixel"  # every view shows who answered


def test_a_guesser_on_the_network_cannot_keep_the_phone_from_pairing(mirrored: Mirrored) -> None:
    """Wrong codes lock out the address they come from, never another one nor the code on the screen."""
    code = mirrored.desktop("POST", "/api/mirror/pairings", {}).json()["code"]
    answers = [
        mirrored.phone("POST", "/mirror/api/v1/pair", body={"code": f"WRONG{i:03d}"}, source="127.0.0.2").status_code
        for i in range(12)
    ]
    assert answers[:5] == [401] * 5 and set(answers[5:]) == {429}
    right_but_locked = mirrored.phone("POST", "/mirror/api/v1/pair", body={"code": code}, source="127.0.0.2")
    assert right_but_locked.status_code == 429  # a guesser never learns that it found the code
    phone = mirrored.phone("POST", "/mirror/api/v1/pair", body={"code": code, "device_name": "Pixel"})
    assert phone.status_code == 200 and phone.json()["device_token"]


def test_the_phone_takes_back_a_memory_write_and_only_a_paired_one_can(mirrored: Mirrored) -> None:
    added = mirrored.desktop("POST", "/api/memory/notes", {"text": "The user likes tea."})
    assert added.status_code == 200, added.text
    undo = {"target": "notes", "entry": "The user likes tea."}
    assert mirrored.phone("POST", "/mirror/api/v1/memory/undo", body=undo).status_code == 401
    token, _device = mirrored.pair()
    taken = mirrored.phone("POST", "/mirror/api/v1/memory/undo", token=token, body=undo)
    assert taken.status_code == 200, taken.text
    assert mirrored.desktop("GET", "/api/memory").json()["notes"]["entries"] == []
    again = mirrored.phone("POST", "/mirror/api/v1/memory/undo", token=token, body=undo)
    assert again.status_code == 400  # already gone: said, nothing else touched


def test_a_phone_starts_a_chat_and_sees_only_its_images(mirrored: Mirrored) -> None:
    token, _device = mirrored.pair()
    made = mirrored.phone("POST", "/mirror/api/v1/conversations", token=token, body={})
    assert made.status_code == 201, made.text
    chat = made.json()["id"]
    assert [c["id"] for c in mirrored.desktop("GET", "/api/conversations").json()] == [chat]  # the desktop's too
    base = f"/mirror/api/v1/conversations/{chat}/attachments"
    for name, body in (("a.png", b"\x89PNG\r\n\x1a\nnot really"), ("notes.txt", b"plain")):
        stored = mirrored.phone("POST", base, token=token, params={"name": name}, content=body,
                                headers={"Content-Type": "application/octet-stream"})  # fmt: skip
        assert stored.status_code == 201, stored.text
        shown = mirrored.phone("GET", f"{base}/{stored.json()['id']}", token=token)
        if name == "a.png":
            assert shown.status_code == 200 and shown.content == body
            assert shown.headers["content-security-policy"] == "default-src 'none'"
        else:
            assert shown.status_code == 404  # not an image: never served to be drawn
    again = f"/mirror/api/v1/conversations/{chat}/messages/nope/regenerate"
    retried = mirrored.phone("POST", again, token=token, body={})
    assert retried.status_code == 404  # no such message: said, nothing started


def test_a_phone_reads_a_chat_s_title_with_its_history(mirrored: Mirrored, anthropic_server: FakeServer) -> None:
    anthropic_server.script(wire.reply_text("Tomatoes first."))
    token, _device = mirrored.pair()
    chat = mirrored.phone("POST", "/mirror/api/v1/conversations", token=token, body={}).json()["id"]
    path = f"/mirror/api/v1/conversations/{chat}/messages"
    assert mirrored.phone("GET", path, token=token).json()["title"] == ""  # "Untitled chat" on the phone, until...
    assert mirrored.phone("POST", path, token=token, body={"text": "plan my   garden"}).is_success
    deadline = time.time() + DEADLINE
    while (history := mirrored.phone("GET", path, token=token).json())["running"]:
        assert time.time() < deadline
        time.sleep(0.1)
    assert history["title"] == "plan my garden"  # ...the first words name it, as on the desktop's list


def test_a_freshly_paired_phone_counts_as_new_only_what_ends_after_it_first_sees_a_chat(
    mirrored: Mirrored, anthropic_server: FakeServer
) -> None:
    anthropic_server.script(wire.reply_text("One."), wire.reply_text("Two."), wire.reply_text("Three."))
    chat = mirrored.desktop("POST", "/api/conversations", {"title": "Old"}).json()["id"]

    def answered(text: str) -> None:
        assert mirrored.desktop("POST", f"/api/conversations/{chat}/messages", {"text": text}).status_code == 202
        deadline = time.time() + DEADLINE
        while mirrored.desktop("GET", f"/api/conversations/{chat}/messages").json()["running"]:
            assert time.time() < deadline
            time.sleep(0.1)

    answered("one")
    answered("two")
    token, _device = mirrored.pair()
    unread = lambda: mirrored.phone("GET", "/mirror/api/v1/conversations", token=token).json()[0]["unread"]  # noqa: E731
    assert unread() == 0  # answered before this phone was paired: not news to it
    answered("three")
    assert unread() == 1
    mirrored.phone("GET", f"/mirror/api/v1/conversations/{chat}/messages", token=token)
    assert unread() == 0  # opened

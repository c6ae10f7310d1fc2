"""One conversation, three views, one wire: a group turn sent from the window is seen the same — the same event types,
in the same order, from the same actors — on the window's socket and on a paired phone's; the same turn taken on
from the terminal (`orkas run --session ID --json`) prints that same sequence, numbered on from where the window
left off; and the window and the phone, open on the chat meanwhile, are sent the terminal's events as they happen.
Real `orkas serve --mirror`, the real CLI, the real Anthropic SDK against the wire fake."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import websockets

from tests.conftest import subprocess_env
from tests.fakes import anthropic as a_wire
from tests.fakes.routing import ByActor
from tests.fakes.server import FakeServer
from tests.mirror_helpers import Mirrored, run_mirrored
from tests.ui.conftest import ORKAS

DEADLINE = 60  # seconds: what must come, not a timing claim


def script(server: FakeServer) -> None:
    router = ByActor({"coder": "CODER-BOT", "commander": "commander of a team"})
    dispatch = a_wire.tool_use("dispatch_to", {"to": "coder", "message": "write add()"}, id="toolu_d")
    router.add("commander", a_wire.message(a_wire.text("Asking the coder."), dispatch), a_wire.reply_text("Done."))
    # Its hand-back marker is control markup, split across deltas on the wire: no view may show it.
    router.add("coder", a_wire.reply_text('def add(a, b): return a + b <handback reason="completed_handoff" />'))
    server.script(*[router] * router.total)


def shape(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(type, actor) in order, consecutive deltas of one actor as one (a phone gets them joined by frame)."""
    seen: list[tuple[str, str | None]] = []
    for event in events:
        key = (event["type"], event.get("actor"))
        if not (seen and key == seen[-1] and key[0] in ("text_delta", "thinking_delta")):
            seen.append(key)
    return seen


async def _until_idle(socket: Any, after: int) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    while not got or got[-1]["type"] != "idle":
        data = json.loads(await asyncio.wait_for(socket.recv(), DEADLINE))
        for event in data if isinstance(data, list) else [data]:
            if event.get("type") != "hello" and event.get("seq", 0) > after:
                got.append(event)
    return got


async def window_and_phone(
    m: Mirrored, chat: str, token: str, after: int, send: Any
) -> tuple[list[Any], list[Any], Any]:
    """What the window's socket and the phone's get, both open while `send()` (run on a thread) sends a turn."""
    desktop = m.base.replace("http://", "ws://") + f"/api/events?token={m.token}&conversation={chat}&after={after}"
    phone = m.mirror.replace("https://", "wss://") + f"/mirror/api/v1/events?conversation={chat}&after={after}"
    async with (
        websockets.connect(desktop) as window,
        websockets.connect(phone, ssl=m.tls(), additional_headers={"Authorization": f"Bearer {token}"}) as mobile,
    ):
        assert json.loads(await asyncio.wait_for(window.recv(), DEADLINE))["type"] == "hello"
        assert json.loads(await asyncio.wait_for(mobile.recv(), DEADLINE))["type"] == "hello"
        sent = asyncio.create_task(asyncio.to_thread(send))
        seen_by_window, seen_by_phone = await asyncio.gather(_until_idle(window, after), _until_idle(mobile, after))
        return seen_by_window, seen_by_phone, await sent


def test_the_window_the_phone_and_the_terminal_get_the_same_events(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    with run_mirrored(anthropic_server, tmp_path) as m:
        env = subprocess_env(
            ORKAS_HOME=str(m.home), ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url
        )
        made = subprocess.run(
            [ORKAS, "agents", "add", "coder", "--description", "codes", "--prompt", "You are CODER-BOT."],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
        chat = m.desktop("POST", "/api/conversations", {}).json()["id"]
        assert m.desktop("PUT", f"/api/conversations/{chat}/members", {"members": ["coder"]}).status_code == 200
        token, _ = m.pair()
        after = m.desktop("GET", f"/api/conversations/{chat}/messages").json()["after"]

        def from_the_window() -> Any:
            return m.desktop("POST", f"/api/conversations/{chat}/messages", {"text": "please write add"})

        script(anthropic_server)
        window, phone, sent = asyncio.run(window_and_phone(m, chat, token, after, from_the_window))
        assert sent.status_code == 202, sent.text
        assert shape(window) == shape(phone)
        assert "handback" not in json.dumps(window) + json.dumps(phone)
        kinds = [kind for kind, _ in shape(window)]
        assert kinds[0] == "user_message" and kinds[-2:] == ["turn_end", "idle"]
        assert {actor for _, actor in shape(window)} >= {"group", "commander", "coder"}
        assert [e["seq"] for e in window] == list(range(after + 1, after + 1 + len(window)))

        def from_the_terminal() -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [ORKAS, "run", "please write add", "--session", chat, "--json"],
                env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path,
            )  # fmt: skip

        script(anthropic_server)
        # The window and the phone stay open on the chat while the terminal runs it: they are sent its turn live.
        window_saw, phone_saw, ran = asyncio.run(window_and_phone(m, chat, token, window[-1]["seq"], from_the_terminal))
        assert ran.returncode == 0, ran.stderr
        terminal = [json.loads(line) for line in ran.stdout.splitlines()]
        assert "handback" not in ran.stdout
        assert shape(terminal) == shape(window)
        assert terminal[0]["seq"] == window[-1]["seq"] + 1  # numbered on from where the window left off
        assert {e["conversation"] for e in terminal} == {chat} and {e["v"] for e in terminal} == {window[0]["v"]}
        assert window_saw == terminal  # the same events, numbered the same, without a reload
        assert shape(phone_saw) == shape(terminal)

        # The window's next look sees the terminal's turn (its history, and the events after what it had).
        history = m.desktop("GET", f"/api/conversations/{chat}/messages").json()
        assert history["after"] == terminal[-1]["seq"] and not history["running"]
        said = [r["text"] for r in history["group"] if r.get("from") == "commander"]
        assert said.count("Done.") == 2
        # Its Settings → Usage counts the terminal's calls too (it counted only those it made itself).
        calls = len((m.home / "usage.jsonl").read_text().splitlines())
        assert calls >= 6 and m.desktop("GET", "/api/usage").json()["total"]["calls"] == calls

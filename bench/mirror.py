"""The phone mirror's speed: how late a phone sees what the desktop sees, how fast a phone catches up,
and what phones watching a streaming reply cost the computer.

A real `orkas serve --mirror` (TLS on loopback) against a streaming fake model server in this process
whose every text delta carries the nanosecond it was sent. Side by side, the desktop's own event socket
(the baseline, plain WebSocket on loopback) and a paired phone's mirror socket:

- latency: delta sent by the model → arrival on each socket, p50/p95/p99 over a long reply;
- catch-up: a phone attaching to a run that has already produced 10,000 events, until the last arrives;
- CPU: the server process's CPU time for the same streaming reply with 0 and with 5 phones attached
  (the desktop socket attached both times), alternating, median of the runs.

Run: `.venv/bin/python -m bench.mirror [--runs 3]`. Targets (issue 17): p95 ≤ 50 ms, catch-up ≤ 1 s,
5 phones ≤ 1.10× the CPU of none.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import websockets
from tests.fakes.server import sse
from tests.mirror_helpers import Mirrored, cpu_seconds, run_mirrored, settle

STAMP = "@"  # a delta's text: "@<ns> "


class StreamingModel:
    """Anthropic's SSE for one text block, streamed live: `deltas` deltas `gap` seconds apart, each
    stamped when it is written; with `hold`, the stream then waits (the run stays active) until released."""

    def __init__(self) -> None:
        self.deltas = 100
        self.gap = 0.0
        self.hold = False
        self.released = threading.Event()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for frame in model.frames():
                        self.wfile.write(frame)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the server went away mid-reply (the pairing run stops it)
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def frames(self) -> Iterator[bytes]:
        start = {"id": "msg_b", "type": "message", "role": "assistant", "model": "claude-test", "content": []}
        start |= {"stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
        yield sse("message_start", {"type": "message_start", "message": start})
        yield sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        )
        for _ in range(self.deltas):
            delta = {"type": "text_delta", "text": f"{STAMP}{time.time_ns()} "}
            yield sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
            if self.gap:
                time.sleep(self.gap)
        if self.hold:
            self.released.wait(120)
        yield sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        end = {"stop_reason": "end_turn", "stop_sequence": None}
        yield sse("message_delta", {"type": "message_delta", "delta": end, "usage": {"output_tokens": self.deltas}})
        yield sse("message_stop", {"type": "message_stop"})


class Watcher:
    """One socket's view of a conversation: arrival time of every event, by type."""

    def __init__(self, url: str, **connect: Any) -> None:
        self.url = url
        self.connect = connect
        self.latencies: list[float] = []  # seconds, model send → arrival, per stamped delta
        self.count = 0
        self.last_arrival = 0.0
        self.done = asyncio.Event()
        self.ready = asyncio.Event()
        self.target = 0  # events to count, or
        self.until_seq = 0  # the seq to reach (a phone's deltas arrive joined: fewer, longer events)
        self.last_seq = 0

    async def run(self) -> None:
        async with websockets.connect(self.url, max_size=None, **self.connect) as socket:
            async for raw in socket:
                now = time.time_ns()
                message = json.loads(raw)
                for event in message if isinstance(message, list) else [message]:  # a phone's are batched
                    kind = event.get("type")
                    if kind == "hello":
                        self.ready.set()
                        continue
                    self.count += 1
                    self.last_arrival = time.perf_counter()
                    self.last_seq = event.get("seq", self.last_seq)
                    if kind == "text_delta":  # a phone's consecutive deltas arrive joined: every stamp
                        stamps = [word[1:] for word in event["text"].split() if word.startswith(STAMP)]
                        self.latencies += [(now - int(stamp)) / 1e9 for stamp in stamps]
                    if kind == "idle" or (self.target and self.count >= self.target):
                        self.done.set()
                        return
                    if self.until_seq and self.last_seq >= self.until_seq:
                        self.done.set()
                        return


def desktop_url(m: Mirrored, chat: str, after: int = 0) -> str:
    return m.base.replace("http://", "ws://") + f"/api/events?conversation={chat}&after={after}&token={m.token}"


def phone_url(m: Mirrored, chat: str, after: int = 0) -> str:
    return m.mirror.replace("https://", "wss://") + f"/mirror/api/v1/events?conversation={chat}&after={after}"


def wait_idle(m: Mirrored, chat: str) -> None:
    deadline = time.time() + 120
    while m.desktop("GET", f"/api/conversations/{chat}/messages").json()["running"]:
        if time.time() > deadline:
            raise SystemExit("the reply never finished")
        time.sleep(0.05)


async def latency(m: Mirrored, model: StreamingModel, token: str) -> tuple[list[float], list[float]]:
    chat = m.desktop("POST", "/api/conversations", {}).json()["id"]
    model.deltas, model.gap, model.hold = 2000, 0.005, False
    desk = Watcher(desktop_url(m, chat))
    phone = Watcher(phone_url(m, chat), ssl=m.tls(), additional_headers={"Authorization": f"Bearer {token}"})
    tasks = [asyncio.create_task(w.run()) for w in (desk, phone)]
    await asyncio.gather(desk.ready.wait(), phone.ready.wait())
    await asyncio.to_thread(m.desktop, "POST", f"/api/conversations/{chat}/messages", {"text": "stream"})
    await asyncio.wait_for(asyncio.gather(*tasks), 120)
    return desk.latencies, phone.latencies


async def catch_up(m: Mirrored, model: StreamingModel, token: str, events: int) -> tuple[float, float, int]:
    """A run that has produced `events` events and is still going: a phone (and, for the baseline, the
    desktop) attaches from the start; seconds until the last of them arrives."""
    chat = m.desktop("POST", "/api/conversations", {}).json()["id"]
    model.deltas, model.gap, model.hold = events, 0.0, True
    model.released.clear()
    await asyncio.to_thread(m.desktop, "POST", f"/api/conversations/{chat}/messages", {"text": "many"})
    probe = Watcher(desktop_url(m, chat))
    probe.target = events
    await asyncio.wait_for(probe.run(), 120)  # every delta has been published
    results = []
    for watcher in (
        Watcher(desktop_url(m, chat)),
        Watcher(phone_url(m, chat), ssl=m.tls(), additional_headers={"Authorization": f"Bearer {token}"}),
    ):
        watcher.until_seq = probe.last_seq
        start = time.perf_counter()
        await asyncio.wait_for(watcher.run(), 60)
        results.append(watcher.last_arrival - start)
    model.released.set()
    await asyncio.to_thread(wait_idle, m, chat)
    return results[0], results[1], probe.count


async def cpu(m: Mirrored, model: StreamingModel, token: str, phones: int) -> tuple[float, float]:
    chat = m.desktop("POST", "/api/conversations", {}).json()["id"]
    model.deltas, model.gap, model.hold = 3000, 0.002, False
    headers = {"Authorization": f"Bearer {token}"}
    watchers = [Watcher(desktop_url(m, chat))]
    watchers += [Watcher(phone_url(m, chat), ssl=m.tls(), additional_headers=headers) for _ in range(phones)]
    tasks = [asyncio.create_task(w.run()) for w in watchers]
    await asyncio.gather(*(w.ready.wait() for w in watchers))
    await asyncio.to_thread(settle, m.process.pid)
    pid = m.process.pid
    before = cpu_seconds(pid), cpu_seconds(pid, pid)
    await asyncio.to_thread(m.desktop, "POST", f"/api/conversations/{chat}/messages", {"text": "stream"})
    await asyncio.wait_for(asyncio.gather(*tasks), 120)
    return cpu_seconds(pid) - before[0], cpu_seconds(pid, pid) - before[1]


def pairing_time(model: StreamingModel, folder: Path) -> float:
    """Seconds of machine time from opening Settings → Phone to the first live words on the phone, each
    step as a person takes it in the two browsers (desktop at 1280×800, phone at 390×844 touch): turn the
    mirror on, Pair a phone, open the QR code's link, Pair, open the conversation that is streaming. A
    person adds the scan and accepting the certificate once."""
    from playwright.sync_api import sync_playwright
    from tests.display import CHROMIUM_FLAGS
    from tests.ui.conftest import chromium_path, start_app
    from tests.ui.test_phone import PHONE, semantics, wait_text

    model.deltas, model.gap, model.hold = 4000, 0.005, False
    mirror_env = {"ORKAS_MIRROR_HOST": "127.0.0.1", "ORKAS_MIRROR_PORT": "0"}
    app = start_app(folder / "pairing", ANTHROPIC_API_KEY="x", ANTHROPIC_BASE_URL=model.url, **mirror_env)
    try:
        headers = {"X-Orkas-Token": app.token}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
            desktop = browser.new_page(viewport={"width": 1280, "height": 800})
            desktop.goto(app.url)
            desktop.wait_for_selector("body[data-ready=true]")
            chat = httpx.post(f"{app.base}/api/conversations", json={}, headers=headers).json()["id"]
            httpx.post(f"{app.base}/api/conversations/{chat}/messages", json={"text": "go"}, headers=headers)
            start = time.perf_counter()
            desktop.click("#settings-button")
            desktop.locator("#settings nav.settings-menu").get_by_role("button", name="Phone").click()
            section = desktop.locator("#settings section.phone")
            section.locator("input[name=mirror]").check()
            section.locator("code.fingerprint").filter(has_text="sha256:").wait_for()
            section.get_by_role("button", name="Pair a phone").click()
            section.locator("img.qr").wait_for()
            code = section.locator("code.pair-code").inner_text()
            mirror = section.locator("code.path").inner_text()
            fingerprint = section.locator("code.fingerprint").inner_text()
            phone = browser.new_context(ignore_https_errors=True, **PHONE).new_page()
            phone.goto(f"{mirror}/m/?pair={code}&fp={fingerprint}")  # what the QR code holds
            semantics(phone)
            phone.get_by_role("button", name="Pair").click()
            phone.get_by_text("working…", exact=False).first.wait_for(timeout=30_000)
            phone.get_by_text("working…", exact=False).first.click()
            wait_text(phone, STAMP)
            elapsed = time.perf_counter() - start
            browser.close()
        return elapsed
    finally:
        app.stop()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--events", type=int, default=10_000)
    args = parser.parse_args()
    model = StreamingModel()
    # Keyword search only: a finished reply is embedded for meaning search on worker threads (seconds of
    # CPU, starting as the reply ends), which would land in whichever run's window closes later: the
    # one with phones, whose last frame leaves up to PHONE_FRAME after the desktop's.
    with (
        tempfile.TemporaryDirectory() as folder,
        run_mirrored(model, Path(folder), embeddings="none") as m,  # type: ignore[arg-type]
    ):
        token, _ = m.pair("Bench phone")
        desk, phone = asyncio.run(latency(m, model, token))
        print(f"latency, model delta → socket, {len(phone)} deltas at 5 ms:")
        print(f"{'':>10} {'desktop':>10} {'phone':>10} {'phone/desktop':>14}")
        for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
            print(f"{name:>10} {pct(desk, q):>8.2f}ms {pct(phone, q):>8.2f}ms {pct(phone, q) / pct(desk, q):>13.2f}×")
        desk_s, phone_s, produced = asyncio.run(catch_up(m, model, token, args.events))
        print(
            f"catch-up of {produced:,} events: desktop {desk_s:.3f} s, phone {phone_s:.3f} s ({phone_s / desk_s:.2f}×)"
        )
        none: list[tuple[float, float]] = []
        five: list[tuple[float, float]] = []
        asyncio.run(cpu(m, model, token, 0))  # warm-up: the first reply of a process pays for imports
        for run in range(args.runs):  # in pairs, alternating which goes first, so that a drift favours neither
            for phones in (0, 5) if run % 2 == 0 else (5, 0):
                (five if phones else none).append(asyncio.run(cpu(m, model, token, phones)))
        print("server CPU for a 3,000-delta reply (the desktop's socket attached both times):")
        for index, part in ((1, "event-loop thread"), (0, "whole process")):
            low = statistics.median(run[index] for run in none)
            high = statistics.median(run[index] for run in five)
            paired = statistics.median(b[index] / a[index] for a, b in zip(none, five, strict=True))
            print(
                f"  {part:>17}: no phones {low:.3f} s, 5 phones {high:.3f} s (medians {high / low:.2f}×;"
                f" median of paired runs {paired:.2f}×)"
            )
            runs = f"none {[round(r[index], 2) for r in none]}, five {[round(r[index], 2) for r in five]}"
            print(f"  {'':>17}  runs: {runs}")
        paired = pairing_time(model, Path(folder))
        print(f"pairing, Settings → Phone to the first live words on the phone: {paired:.1f} s of machine time")
    model.server.shutdown()


if __name__ == "__main__":
    sys.exit(main())

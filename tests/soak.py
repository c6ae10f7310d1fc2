"""A day of use, compressed: a real `orkas serve --mirror` driven through its API as the window and phones drive it
— many conversations, turns with tool calls, phones following along, the knowledge base watching a folder that
changes, learning cycles forced now and then — while the server process is measured from outside (resident memory,
open files, threads, child processes) and from inside (`/api/status/loop`: how late its event loop woke).

`bench/soak.py` runs it long, beside the code as it was; `tests/e2e/test_soak.py` runs it short in the suite.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets

from tests.conftest import subprocess_env
from tests.fakes.anthropic import message, reply_text, tool_use
from tests.fakes.server import FakeServer, Recorded, Reply
from tests.mirror_helpers import settle

LAUNCH = "import sys; from orkas.cli import main; sys.exit(main())"  # what the `orkas` script runs
# What the model asks for, in turn: reads that run at once (a confined command among them), never a question.
CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("read_file", {"path": "notes.md"}),
    ("bash", {"command": "ls -la && wc -l notes.md"}),
    ("grep_files", {"pattern": "soak"}),
    ("list_files", {"path": "."}),
)


@dataclass
class Plan:
    conversations: int = 50
    turns: int = 2000
    phones: int = 3
    workers: int = 4  # conversations running at once
    learn_every: int = 250  # turns between forced learning cycles
    change_every: int = 25  # turns between changes to the watched folder
    sample_every: int = 100  # turns between samples of the curve
    embeddings: str = "bundled"


@dataclass
class Sample:
    turns: int
    seconds: float
    rss_mb: float
    fds: int
    threads: int
    children: int
    loop_p99_ms: int | None = None


@dataclass
class Outcome:
    samples: list[Sample] = field(default_factory=list)
    loop: dict[str, Any] = field(default_factory=dict)  # over the whole run (None where the server cannot say)
    ping_ms: list[float] = field(default_factory=list)  # a trivial request's round trip, throughout
    settled: Sample | None = None  # after the last turn, once the server is quiet again
    failed_turns: int = 0
    learning_cycles: int = 0
    phone_events: int = 0


def model_server() -> FakeServer:
    """The fake model: a tool call, then a short answer after its result; a plain answer to a call without tools
    (a reflection)."""
    counter = itertools.count(1)

    def respond(request: Recorded) -> Reply:
        body = request.json
        last = (body.get("messages") or [{}])[-1]
        content = last.get("content")
        answered = isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)
        n = next(counter)
        if not body.get("tools"):
            return reply_text('{"lessons": [], "memo": "nothing new"}')
        if answered:
            return reply_text(f"Done with step {n}: the soak folder looks fine. " * 3)
        name, arguments = CALLS[n % len(CALLS)]
        return message(tool_use(name, arguments, id=f"toolu_{n}"))

    fake = FakeServer("/v1/messages", responder=respond).start()
    return fake


def process_tree(pid: int) -> list[int]:
    """The pid's descendants (bubblewrap's commands, the web engine's processes)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parents.items() if pp == parent]
        found += children
        frontier += children
    return found


def measure(pid: int, turns: int, started: float) -> Sample:
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return Sample(
        turns=turns,
        seconds=time.perf_counter() - started,
        rss_mb=int(status["VmRSS"].split()[0]) / 1024,
        fds=len(os.listdir(f"/proc/{pid}/fd")),
        threads=int(status["Threads"]),
        children=len(process_tree(pid)),
    )


class Served:
    """`orkas serve --mirror` over `home`, from the app folder `app` (None: the installed one)."""

    def __init__(self, home: Path, model_url: str, app: Path | None, embeddings: str) -> None:
        home.mkdir(parents=True, exist_ok=True)
        preferences = {"auto_title": False, "memory": True, "learning": True, "offered": True}
        (home / "settings.json").write_text(json.dumps({"preferences": {**preferences, "embeddings": embeddings}}))
        env = subprocess_env(ORKAS_HOME=str(home), ANTHROPIC_API_KEY="sk-ant-soak", ANTHROPIC_BASE_URL=model_url)
        if app is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(app), env.get("PYTHONPATH", "")])
        command = [sys.executable, "-c", LAUNCH, "serve", "--mirror", "--mirror-host", "127.0.0.1", "--mirror-port"]
        self.process = subprocess.Popen(
            [*command, "0"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        assert self.process.stdout is not None
        url = self.process.stdout.readline().strip()
        line = self.process.stdout.readline().strip()
        if not line.startswith("mirror: https://"):
            self.stop()
            raise RuntimeError(f"orkas serve did not start: {url!r} {line!r}")
        self.base, self.token = url.split("/?", 1)[0], url.split("token=", 1)[1]
        self.mirror = line.split()[1]
        self.home = home
        self.tls = ssl.create_default_context(cafile=str(home / "mirror" / "mirror-cert.pem"))

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()


class Soak:
    def __init__(self, served: Served, plan: Plan, workspace: Path, watched: Path) -> None:
        self.served = served
        self.plan = plan
        self.workspace = workspace
        self.watched = watched
        self.outcome = Outcome()
        self.turns_done = 0
        self.active: list[str] = []  # conversations with a turn going on (the phones follow them)
        self.seen: dict[str, int] = {}  # the last event each conversation's view has had
        self.loop_counts: dict[str, int] = {}  # the loop watch's counts at the last sample
        self.finished = asyncio.Event()
        self.started = time.perf_counter()
        self.client = httpx.AsyncClient(base_url=served.base, headers={"X-Orkas-Token": served.token}, timeout=60)

    async def api(self, method: str, path: str, body: Any = None) -> Any:
        response = await self.client.request(method, path, json=body)
        response.raise_for_status()
        return response.json() if response.content else None

    async def run(self, on_sample: Callable[[Sample], None] = lambda s: None) -> Outcome:
        self.on_sample = on_sample
        await self.api("POST", "/api/agents", {"name": "soaker", "description": "Soaks.", "prompt": "Do the task."})
        await self.api("POST", "/api/kb/paths", {"path": str(self.watched), "watch": True})
        chats = [
            (await self.api("POST", "/api/conversations", {"workspace": str(self.workspace)}))["id"]
            for _ in range(self.plan.conversations)
        ]
        for chat in chats[::5]:  # a fifth of them talk to a named agent (which learns; Orkas's own session does not)
            await self.api("PATCH", f"/api/conversations/{chat}", {"agent": "soaker"})
        tokens = [await self._pair(f"Phone {n}") for n in range(self.plan.phones)]
        if await self._has_loop():
            await self.api("POST", "/api/status/loop/reset", {})  # the set-up's stalls are not the soak's
        background = [asyncio.create_task(self._phone(token)) for token in tokens]
        background.append(asyncio.create_task(self._ping()))
        queue: asyncio.Queue[int] = asyncio.Queue()
        for turn in range(self.plan.turns):
            queue.put_nowait(turn)
        await asyncio.gather(*(self._worker(queue, chats) for _ in range(self.plan.workers)))
        self.finished.set()
        await asyncio.gather(*background, return_exceptions=True)
        if await self._has_loop():
            self.outcome.loop = await self.api("GET", "/api/status/loop")
        await asyncio.to_thread(settle, self.served.pid, window=1.0, most=600)  # embeddings take minutes
        self.outcome.settled = measure(self.served.pid, self.turns_done, self.started)
        await self.client.aclose()
        return self.outcome

    async def _has_loop(self) -> bool:
        return (await self.client.get("/api/status/loop")).status_code == 200

    async def _pair(self, name: str) -> str:
        code = (await self.api("POST", "/api/mirror/pairings", {}))["code"]
        async with httpx.AsyncClient(verify=self.served.tls, timeout=30) as phone:
            answer = await phone.post(
                f"{self.served.mirror}/mirror/api/v1/pair", json={"code": code, "device_name": name}
            )
            answer.raise_for_status()
            return str(answer.json()["device_token"])

    async def _worker(self, queue: asyncio.Queue[int], chats: list[str]) -> None:
        while not queue.empty():
            turn = queue.get_nowait()
            chat = chats[turn % len(chats)]
            while chat in self.active:  # another worker is in this one: the next that is free
                chat = chats[(chats.index(chat) + 1) % len(chats)]
            self.active.append(chat)
            try:
                ok = await self._turn(chat, turn)
            finally:
                self.active.remove(chat)
            self.outcome.failed_turns += not ok
            self.turns_done += 1
            await self._between(self.turns_done)

    async def _turn(self, chat: str, turn: int) -> bool:
        """One turn as the window does it: open the chat's event socket, send, read until idle."""
        after = self.seen.get(chat, 0)  # the window asks for what came after what it has shown
        url = self.served.base.replace("http://", "ws://") + f"/api/events?conversation={chat}&after={after}"
        url += f"&token={self.served.token}"
        async with websockets.connect(url, max_size=None, close_timeout=1) as socket:
            await self._until(socket, lambda e: e.get("type") == "hello")
            await self.api(
                "POST", f"/api/conversations/{chat}/messages", {"text": f"turn {turn}: check the soak folder"}
            )
            last = await self._until(socket, lambda e: e.get("type") == "idle", keep=("done", "error"))
        return last is not None and last.get("type") == "done"

    async def _until(self, socket: Any, stop: Callable[[dict[str, Any]], bool], keep: tuple[str, ...] = ()) -> Any:
        kept = None
        async for raw in socket:
            for event in _events(raw):
                if "seq" in event:  # the window asks for what came after what it has shown
                    self.seen[event["conversation"]] = event["seq"]
                if event.get("type") in keep:
                    kept = event
                if stop(event):
                    return kept if keep else event
        return kept

    async def _between(self, done: int) -> None:
        plan = self.plan
        if done % plan.change_every == 0:  # the watched folder changes: a new note, an edit, one removed
            (self.watched / f"note-{done}.md").write_text(f"# Note {done}\n\nThe soak wrote this at turn {done}.\n")
            (self.watched / "running.md").write_text(f"# Running\n\nUpdated at turn {done}.\n" * 20)
            (self.watched / f"note-{done - 3 * plan.change_every}.md").unlink(missing_ok=True)
        if done % plan.learn_every == 0:
            outcome = await self.api("POST", "/api/learning/run", {"force": True})
            self.outcome.learning_cycles += 1 if outcome is not None else 0
        if done % plan.sample_every == 0:
            sample = measure(self.served.pid, done, self.started)
            if await self._has_loop():  # how late the loop woke since the last sample
                counts = (await self.api("GET", "/api/status/loop"))["counts"]
                since = {ms: n - self.loop_counts.get(ms, 0) for ms, n in counts.items()}
                sample.loop_p99_ms = quantile(since, 0.99)
                self.loop_counts = counts
            self.outcome.samples.append(sample)
            self.on_sample(sample)

    async def _phone(self, token: str) -> None:
        """A phone follows whichever chat is busy, for a while, then another; its alerts come on their own socket."""
        headers = {"Authorization": f"Bearer {token}"}
        base = self.served.mirror.replace("https://", "wss://") + "/mirror/api/v1"
        async with websockets.connect(f"{base}/alerts", ssl=self.served.tls, additional_headers=headers) as alerts:
            while not self.finished.is_set():
                chat = self.active[0] if self.active else None
                if chat is None:
                    await asyncio.sleep(0.05)
                    continue
                async with httpx.AsyncClient(verify=self.served.tls, headers=headers, timeout=30) as phone:
                    opened = await phone.get(f"{self.served.mirror}/mirror/api/v1/conversations/{chat}/messages")
                after = opened.json().get("after", 0) if opened.status_code == 200 else 0
                url = (
                    f"{base}/events?conversation={chat}&after={after}"  # as the phone does: the chat, then what is new
                )
                async with websockets.connect(url, ssl=self.served.tls, additional_headers=headers) as socket:
                    await self._follow(socket, chat)
                with contextlib.suppress(TimeoutError):  # the alerts that came meanwhile, read
                    while True:
                        await asyncio.wait_for(alerts.recv(), 0.001)

    async def _follow(self, socket: Any, chat: str) -> None:
        """The chat's history, then its live events while a turn goes on in it (and a moment after)."""
        while chat in self.active and not self.finished.is_set():
            try:
                raw = await asyncio.wait_for(socket.recv(), 0.5)
            except TimeoutError:
                continue
            self.outcome.phone_events += len(_events(raw))

    async def _ping(self) -> None:
        while not self.finished.is_set():
            asked = time.perf_counter()
            await self.client.get("/api/conversations/none-such")
            self.outcome.ping_ms.append((time.perf_counter() - asked) * 1000)
            await asyncio.sleep(0.1)


def _events(raw: str | bytes) -> list[dict[str, Any]]:
    message = json.loads(raw)
    return message if isinstance(message, list) else [message]


def soak(folder: Path, plan: Plan, app: Path | None = None, on_sample: Callable[[Sample], None] = print) -> Outcome:
    """Run the plan over a fresh data folder in `folder` against the app at `app`."""
    workspace, watched = folder / "workspace", folder / "watched"
    for made in (workspace, watched):
        made.mkdir(parents=True)
    (workspace / "notes.md").write_text("# Soak\n\n" + "A line the soak greps for.\n" * 200)
    for n in range(5):
        (watched / f"start-{n}.md").write_text(f"# Start {n}\n\nWatched from the beginning.\n" * 10)
    fake = model_server()
    served = Served(folder / "home", fake.url, app, plan.embeddings)
    threading.Thread(target=_forget_requests, args=(fake,), daemon=True).start()
    try:
        return asyncio.run(Soak(served, plan, workspace, watched).run(on_sample))
    finally:
        served.stop()
        fake.stop()


def _forget_requests(fake: FakeServer) -> None:
    """The fake records every request; a day's worth would grow this process, not the server's."""
    while True:
        time.sleep(1)
        with fake._lock:
            fake.requests.clear()


def ratio(outcome: Outcome, after: int) -> float | None:
    """RSS at the end over RSS after the first `after` turns."""
    first = next((s for s in outcome.samples if s.turns >= after), None)
    last = outcome.samples[-1] if outcome.samples else None
    return last.rss_mb / first.rss_mb if first and last else None


def quantile(counts: dict[str, int], q: float) -> int | None:
    """From the loop watch's counts by millisecond: the millisecond bucket (upper edge) at quantile q."""
    total = sum(counts.values())
    seen = 0
    for ms in sorted(counts, key=int):
        seen += counts[ms]
        if total and seen >= q * total:
            return int(ms) + 1
    return None


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else float("nan")

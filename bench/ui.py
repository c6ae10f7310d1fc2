"""The desktop UI's speed in the real browser (Debian's chromium): first paint, opening a 2,000-message
conversation and scrolling it, and streaming a 20,000-token reply — side by side with the UI as it was
before issue 16 (git BASELINE, unpacked into a temporary folder and served the same way).

    .venv/bin/python -m bench.ui [--runs 5]

Each side is a real `orkas serve` over a fresh data folder, talking to the wire-level fake Anthropic
server in this process. Measured in the page: the first contentful paint; from the click on the chat to
its 2,000 messages drawn; long tasks (the browser's own `longtask` entries, over 50 ms) while opening
and while scrolling from the bottom to the top; and every frame's length while the reply streams in
4,000 deltas. Targets (issue 16): first paint ≤ 0.5 s, open ≤ 1 s, no long task while scrolling, no
frame over 50 ms while streaming.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, Page, sync_playwright
from tests.display import CHROMIUM_FLAGS
from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer, Reply, sse

from bench.baseline import tree_at

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "cf1ac96"  # main before issue 16's UI work
MESSAGES = 2000
DELTAS = 4000  # × ~5 tokens: a 20,000-token reply

PARAGRAPH = (
    "The **parser** reads each line, keeps the ones that matter and hands them to `build()`, "
    "which checks [the schema](https://example.com/schema) before anything is written. "
)
CODE = "```python\ndef parse(text):\n    return [line for line in text.splitlines() if line.strip()]\n```\n\n"


def reply_text(index: int) -> str:
    """A varied Markdown answer: paragraphs, a list, sometimes code and a table."""
    parts = [f"Answer {index}: " + PARAGRAPH * 2, "\n\n- first point\n- second point with `code`\n\n"]
    if index % 5 == 0:
        parts.append(CODE)
    if index % 7 == 0:
        parts.append("| a | b |\n|---|---|\n| 1 | 2 |\n\n")
    return "".join(parts)


def stream_reply() -> Reply:
    """One long answer in DELTAS small deltas (about five tokens each)."""
    text = "".join(reply_text(i) for i in range(400))
    size = max(1, len(text) // DELTAS)
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    frames = wire.events([wire.text("")], output_tokens=20_000)
    head, tail = frames[:3], frames[3:]  # message_start, ping, content_block_start | stop, delta, message_stop
    delta = {"type": "content_block_delta", "index": 0}
    deltas = [sse("content_block_delta", {**delta, "delta": {"type": "text_delta", "text": c}}) for c in chunks]
    return Reply(events=head + deltas + tail, event_delay=0.0005)


def write_long_chat(home: Path) -> str:
    """A conversation of MESSAGES messages, written as the app writes them."""
    sys.path.insert(0, str(ROOT / "app"))
    from orkas.adapter.conversations.store import ConversationStore
    from orkas.adapter.conversations.transcript import encode_line
    from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage

    store = ConversationStore(home)
    chat = store.create(title="Long history")
    lines = []
    for i in range(MESSAGES // 2):
        lines.append(encode_line(UserMessage(content=(TextBlock(text=f"Question {i}: what about the parser?"),))))
        answer = AssistantMessage(content=(TextBlock(text=reply_text(i)),), provider="anthropic", model="claude-test")
        lines.append(encode_line(answer))
    store.transcript_path(chat.id).write_bytes(b"".join(lines))
    # Only the fields every version reads: the baseline's Conversation knows fewer of them.
    meta = {k: getattr(chat, k) for k in ("id", "title", "created", "updated", "workspace", "granted")}
    (store.root / chat.id / "meta.json").write_text(json.dumps(meta))
    return chat.id


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@contextmanager
def served(tree: Path, fake: FakeServer) -> Iterator[tuple[str, Path]]:
    home = Path(tempfile.mkdtemp(prefix="orkas-ui-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORKAS_", "ANTHROPIC_", "OPENAI_"))}
    env.update(PYTHONPATH=str(tree / "app"), ORKAS_HOME=str(home), ANTHROPIC_BASE_URL=fake.url)
    env["ANTHROPIC_API_KEY"] = "sk-ant-bench"
    (home / "settings.json").write_text('{"preferences": {"auto_title": false}}')
    launch = "import sys; from orkas.cli import main; sys.exit(main())"
    process = subprocess.Popen([sys.executable, "-c", launch, "serve"], env=env, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    try:
        yield url, home
    finally:
        process.terminate()
        process.wait(10)
        shutil.rmtree(home, ignore_errors=True)


WATCH = """() => {
  window.__long = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__long.push(e.duration); })
    .observe({ type: "longtask" });
}"""


def first_paint(browser: Browser, url: str) -> float:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    paint = page.evaluate("performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? performance.now()")
    context.close()
    return float(paint) / 1000


def open_long_chat(page: Page, chat_id: str) -> dict[str, float]:
    page.evaluate(WATCH)
    started = page.evaluate(
        """async ([id, count]) => {
          const find = () => document.querySelector(`#chats .chat[data-id="${id}"] .chat-open`);
          while (!find()) await new Promise((done) => setTimeout(done, 20)); // the list may be redrawing
          await new Promise((done) => setTimeout(done, 300));
          const button = find();
          const t0 = performance.now();
          button.click();
          while (document.querySelectorAll("#messages .msg").length < count) {
            await new Promise((done) => requestAnimationFrame(done));
            if (performance.now() - t0 > 60000) return -document.querySelectorAll("#messages .msg").length;
          }
          for (let i = 0; i < 2; i++) await new Promise((done) => requestAnimationFrame(done)); // painted
          return performance.now() - t0;
        }""",
        [chat_id, MESSAGES],
    )
    if started < 0:
        raise RuntimeError(f"the chat showed {-started} of {MESSAGES} messages after 60 s")
    opening = max(page.evaluate("window.__long"), default=0.0)
    page.evaluate("window.__long = []")
    page.evaluate(
        """async () => {
          const box = document.querySelector("#scroll");
          // A person leaves the bottom with the wheel (or a key, or the scrollbar): the chat stops following.
          box.dispatchEvent(new WheelEvent("wheel", { deltaY: -100, bubbles: true }));
          const steps = 40;
          for (let i = steps; i >= 0; i--) {
            box.scrollTop = (box.scrollHeight * i) / steps;
            await new Promise((done) => requestAnimationFrame(done));
            await new Promise((done) => requestAnimationFrame(done));
          }
        }"""
    )
    scrolling = page.evaluate("window.__long")
    return {
        "open": float(started) / 1000,
        "open_long": float(opening),
        "scroll_long_max": max(scrolling, default=0.0),
        "scroll_long_count": float(len([d for d in scrolling if d > 50])),
    }


def stream(page: Page, fake: FakeServer) -> dict[str, float]:
    fake.script(stream_reply())
    page.click("#new-chat")
    page.evaluate(WATCH)
    page.evaluate(
        """() => {
          window.__frames = [];
          let last = null;
          const tick = (now) => {
            if (document.querySelector(".msg.assistant") && last !== null) window.__frames.push(now - last);
            last = now;
            if (!window.__stopFrames) requestAnimationFrame(tick);
          };
          requestAnimationFrame(tick);
        }"""
    )
    started = time.perf_counter()
    page.fill("textarea.input", "Write the long report")
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.assistant.finished", timeout=180_000)
    took = time.perf_counter() - started
    page.evaluate("window.__stopFrames = true")
    frames = page.evaluate("window.__frames")
    longs = page.evaluate("window.__long")
    return {
        "stream_s": took,
        "frame_max": max(frames, default=0.0),
        "frames_over_50": float(len([f for f in frames if f > 50])),
        "frame_p99": sorted(frames)[int(len(frames) * 0.99)] if frames else 0.0,
        "long_max": max(longs, default=0.0),
    }


def measure(browser: Browser, tree: Path, runs: int) -> dict[str, float]:
    fake = FakeServer(wire.PATH).start()
    try:
        with served(tree, fake) as (url, home):
            paints = [first_paint(browser, url) for _ in range(runs)]
            note(f"{tree.name}: first paint {statistics.median(paints):.3f} s")
            # The stream first, while the data folder holds no long chat to open by itself.
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector("body[data-ready=true]")
            streamed = stream(page, fake)
            note(f"{tree.name}: streamed {streamed}")
            context.close()
            chat_id = write_long_chat(home)
            opens: list[dict[str, float]] = []
            for _ in range(runs):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.goto(url)
                page.wait_for_selector("body[data-ready=true]")
                page.click("#new-chat")  # the long chat may have opened by itself: start from elsewhere
                opens.append(open_long_chat(page, chat_id))
                note(f"{tree.name}: opened {opens[-1]}")
                context.close()
    finally:
        fake.stop()
    median = lambda key: statistics.median(o[key] for o in opens)  # noqa: E731
    return {
        "first_paint": statistics.median(paints),
        "open": median("open"),
        "open_long": median("open_long"),
        "scroll_long_max": max(o["scroll_long_max"] for o in opens),
        "scroll_long_count": max(o["scroll_long_count"] for o in opens),
        **streamed,
    }


ROWS = [
    ("first_paint", "first contentful paint (median)", "s"),
    ("open", f"open a {MESSAGES}-message chat (median)", "s"),
    ("open_long", "longest task while opening (median)", "ms"),
    ("scroll_long_max", "longest task while scrolling it (worst run)", "ms"),
    ("scroll_long_count", "tasks over 50 ms while scrolling (worst run)", ""),
    ("stream_s", "a 20,000-token reply, send to finished", "s"),
    ("frame_max", "longest frame while it streams", "ms"),
    ("frame_p99", "99th-percentile frame while it streams", "ms"),
    ("frames_over_50", "frames over 50 ms while it streams", ""),
    ("long_max", "longest task while it streams", "ms"),
]


def show(value: float, unit: str) -> str:
    return f"{value:.3f} s" if unit == "s" else f"{value:.0f} ms" if unit == "ms" else f"{value:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--baseline", default=BASELINE, help=f"the git revision to compare with (default {BASELINE})")
    args = parser.parse_args()
    baseline_tree = None if args.no_baseline else tree_at(args.baseline, ("app", "frontend"), compile_app=False)
    with sync_playwright() as playwright:
        chromium = shutil.which("chromium") or "chromium"
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        now = measure(browser, ROOT, args.runs)
        before = measure(browser, baseline_tree, args.runs) if baseline_tree else None
        browser.close()
    print(f"# bench.ui — {time.strftime('%Y-%m-%d')} ({platform.machine()}, {os.cpu_count()} cores), runs={args.runs}")
    print(f"| | before ({args.baseline}) | now | now/before |" if before else "| | now |")
    print("|---|---:|---:|---:|" if before else "|---|---:|")
    for key, label, unit in ROWS:
        if before:
            ratio = f"{now[key] / before[key]:.2f}×" if before[key] else "—"
            print(f"| {label} | {show(before[key], unit)} | {show(now[key], unit)} | {ratio} |")
        else:
            print(f"| {label} | {show(now[key], unit)} |")
    if baseline_tree is not None:
        shutil.rmtree(baseline_tree.parent if baseline_tree.name == "app" else baseline_tree, ignore_errors=True)


if __name__ == "__main__":
    main()

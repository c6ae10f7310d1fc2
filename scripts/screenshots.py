"""Regenerate the README's screenshots of the main screens into docs/screenshots/.

Runs the real app (`orkas serve`) against the wire-level fake Anthropic server with a scripted
conversation, and photographs it in Debian's chromium:

    .venv/bin/python scripts/screenshots.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402
from tests.display import CHROMIUM_FLAGS  # noqa: E402
from tests.fakes import anthropic as wire  # noqa: E402
from tests.fakes.server import FakeServer, Reply  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
ORKAS = str(Path(sys.executable).parent / "orkas")
TIMEOUT = 20_000

ANSWER = """I read **notes.md** and checked the project. Here is the plan:

1. Move the parser into `parser.py`
2. Add tests for the empty-input case
3. Update the README

```python
def parse(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]
```

中文也可以：计划已经写好了。"""


def send(page: Page, text: str) -> None:
    page.fill("textarea.input", text)
    page.keyboard.press("Enter")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    fake = FakeServer(wire.PATH).start()
    home = Path(tempfile.mkdtemp(prefix="orkas-shots-"))
    (home / "project").mkdir()
    (home / "project" / "notes.md").write_text("# Notes\nSplit the parser.\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(ORKAS_HOME=str(home / "data"), ANTHROPIC_API_KEY="sk-ant-demo-key", ANTHROPIC_BASE_URL=fake.url)
    server = subprocess.Popen([ORKAS, "serve"], env=env, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    try:
        with sync_playwright() as playwright:
            chromium = shutil.which("chromium") or "chromium"
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800}, device_scale_factor=1)
            page.goto(url)
            page.wait_for_selector("body[data-ready=true]")

            fake.script(
                wire.message(
                    wire.thinking("The user wants a plan; read the notes first."),
                    wire.text("Let me look at the notes first."),
                    wire.tool_use("list_files", {"path": "."}, id="toolu_1"),
                ),
                wire.reply_text(ANSWER, input_tokens=1840, output_tokens=212),
            )
            send(page, "Read my notes and propose a plan for the parser refactor")
            expect(page.locator(".msg.assistant .markdown").last).to_contain_text("中文", timeout=TIMEOUT)
            expect(page.locator("button.stop")).to_be_hidden(timeout=TIMEOUT)
            page.screenshot(path=str(OUT / "chat.png"))

            fake.script(
                Reply(
                    events=wire.events(
                        [wire.tool_use("bash", {"command": "rm -rf build && make release"}, id="toolu_2")]
                    )
                ),
                wire.reply_text("Release built."),
            )
            send(page, "Clean the build folder and build a release")
            expect(page.locator(".permission-card")).to_be_visible(timeout=TIMEOUT)
            page.screenshot(path=str(OUT / "permission.png"))
            page.locator(".permission-card button.allow_once").click()
            expect(page.locator("button.stop")).to_be_hidden(timeout=TIMEOUT)

            page.click("#settings-button")
            form = page.locator("form.add-provider")
            form.locator("input[name=name]").fill("anthropic")
            form.locator("input[name=key]").fill("sk-ant-api03-demo-key-0000-7f3a")
            form.locator("input[name=models]").fill("claude-sonnet-4-5")
            form.locator("button[type=submit]").click()
            expect(page.locator(".provider .key")).to_be_visible(timeout=TIMEOUT)
            page.screenshot(path=str(OUT / "settings.png"))
            page.keyboard.press("Escape")

            # The same chat from a phone to a wide monitor (the layout test checks these sizes).
            for width, height in ((390, 844), (1280, 800), (1920, 1080)):
                context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
                view = context.new_page()
                view.goto(url)
                view.wait_for_selector("body[data-ready=true]")
                expect(view.locator(".msg.assistant .markdown").last).to_contain_text("Release built", timeout=TIMEOUT)
                view.screenshot(path=str(OUT / f"layout-{width}x{height}.png"))
                if width < 800:
                    view.get_by_role("button", name="Menu", exact=True).click()
                    expect(view.locator("#sidebar")).to_be_visible()
                    view.wait_for_timeout(300)  # the drawer's slide
                    view.screenshot(path=str(OUT / f"layout-{width}x{height}-menu.png"))
                context.close()
            page.click("#settings-button")

            page.locator("#settings").get_by_role("button", name="Appearance").click()
            page.select_option("select[name=theme]", "dark")
            page.keyboard.press("Escape")
            page.screenshot(path=str(OUT / "dark.png"))
            browser.close()
    finally:
        server.terminate()
        server.wait(10)
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)
    for shot in sorted(OUT.glob("*.png")):
        print(f"{shot.relative_to(ROOT)}: {shot.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()

"""Code blocks are coloured by the app's own highlighter (nodes, never HTML from the model), and an
attached image shows inline in its bubble — live and after a reload — served only as the chat's image."""

from __future__ import annotations

import base64
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from tests.engine.tools_for_tests import PNG_1PX
from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import App

TIMEOUT = 15_000

CODE = """Here it is:

```python
def greet(name):  # say hello
    return f"hi {name}" if name else None
```

```html
<img src=x onerror="document.body.dataset.owned='yes'">
```

```brainfuck
+[-->-[>>+>-----<<]<--<---]>-.
```
"""


def test_code_is_highlighted_safely(page: Page, app: App, anthropic_server: FakeServer) -> None:
    anthropic_server.script(wire.reply_text(CODE))
    page.fill("textarea.input", "show code")
    page.keyboard.press("Enter")
    python = page.locator(".msg.assistant .code pre code").first
    expect(python.locator(".tok-keyword", has_text="def")).to_have_count(1, timeout=TIMEOUT)
    expect(python.locator(".tok-comment")).to_have_text("# say hello")
    expect(python.locator(".tok-string")).to_have_text('f"hi {name}"')  # the prefix is part of it
    expect(python.locator(".tok-literal")).to_have_text("None")
    expect(python).to_have_text('def greet(name):  # say hello\n    return f"hi {name}" if name else None')
    html = page.locator(".msg.assistant .code pre code").nth(1)
    expect(html).to_contain_text("<img src=x onerror=")
    assert page.locator(".msg.assistant img").count() == 0  # the model's HTML is text, never an element
    assert page.evaluate("document.body.dataset.owned") is None
    unknown = page.locator(".msg.assistant .code pre code").nth(2)
    expect(unknown.locator("span")).to_have_count(0)  # an unknown language stays plain


def test_a_wide_table_scrolls_sideways_and_never_breaks_a_short_word(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    columns = [f"col{n}" for n in range(14)]
    row = ["a_very_long_identifier_without_any_spaces_in_it", *(str(n) for n in range(13))]
    table = "\n".join(["| " + " | ".join(columns) + " |", "|" + "---|" * 14, "| " + " | ".join(row) + " |"])
    anthropic_server.script(wire.reply_text(table))
    page.fill("textarea.input", "a table")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant table th")).to_have_count(14, timeout=TIMEOUT)
    lines = page.evaluate(
        """() => [...document.querySelectorAll('.msg.assistant table th')].map((th) => {
          const range = document.createRange(); range.selectNodeContents(th);
          return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size; })"""
    )
    assert set(lines) == {1}, lines  # "col1", never "c / ol1"
    wrap = page.locator(".msg.assistant .table-wrap")
    assert wrap.evaluate("(w) => w.scrollWidth > w.clientWidth")  # wider than the chat: it scrolls, in its own box


def test_an_attached_image_shows_inline_and_only_as_this_chats_image(
    page: Page, app: App, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    anthropic_server.script(wire.reply_text("A red pixel."))
    picture = tmp_path / "pixel.png"
    picture.write_bytes(base64.b64decode(PNG_1PX))
    page.locator("#composer input[type=file]").set_input_files(str(picture))
    expect(page.locator("#composer .chip[data-attachment-id]")).to_have_count(1, timeout=TIMEOUT)
    page.fill("textarea.input", "what is this?")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .markdown")).to_have_text("A red pixel.", timeout=TIMEOUT)
    loaded = "document.querySelector('.msg.user img.inline-image')?.naturalWidth === 1"
    page.wait_for_function(loaded)  # live
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    image = page.locator(".msg.user img.inline-image")
    expect(image).to_have_attribute("alt", "pixel.png", timeout=TIMEOUT)
    page.wait_for_function(loaded)  # and after a reload
    assert (image.get_attribute("src") or "").startswith("blob:")  # fetched with the token, never a bare URL

    headers = {"X-Orkas-Token": app.token}
    chats = httpx.get(f"{app.base}/api/conversations", headers=headers).json()
    chat = chats[0]["id"]
    messages = httpx.get(f"{app.base}/api/conversations/{chat}/messages", headers=headers).json()["messages"]
    pixel = next(b["id"] for b in messages[0]["content"] if b["type"] == "attachment")
    upload = {**headers, "Content-Type": "application/octet-stream"}
    notes = httpx.post(
        f"{app.base}/api/conversations/{chat}/attachments?name=notes.txt", content=b"secret notes", headers=upload
    ).json()
    served = httpx.get(f"{app.base}/api/conversations/{chat}/attachments/{pixel}", headers=headers)
    assert served.status_code == 200 and served.headers["content-type"] == "image/png"
    assert served.headers["content-security-policy"] == "default-src 'none'"
    not_an_image = httpx.get(f"{app.base}/api/conversations/{chat}/attachments/{notes['id']}", headers=headers)
    assert not_an_image.status_code == 404
    other = httpx.post(f"{app.base}/api/conversations", json={}, headers=headers).json()["id"]
    assert httpx.get(f"{app.base}/api/conversations/{other}/attachments/{pixel}", headers=headers).status_code == 404
    assert httpx.get(f"{app.base}/api/conversations/{chat}/attachments/{pixel}").status_code == 401

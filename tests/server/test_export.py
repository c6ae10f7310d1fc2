"""A conversation exported through the real `orkas serve`: Markdown a person reads, and a zip with the
full records and the conversation's attachments — and nothing from outside its folder."""

from __future__ import annotations

import io
import json
import time
import zipfile
from pathlib import Path
from urllib.parse import unquote

import httpx

from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import start_app


def test_a_conversation_exports_as_markdown_and_as_a_zip_with_its_attachments(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    anthropic_server.script(wire.reply_text("The **plan** is ready."))
    app = start_app(tmp_path / "home", ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    try:
        with httpx.Client(base_url=app.base, headers={"X-Orkas-Token": app.token}, timeout=30) as client:
            conversation = client.post("/api/conversations", json={"title": "Plans"}).json()["id"]
            uploaded = client.post(
                f"/api/conversations/{conversation}/attachments",
                params={"name": "notes.txt"},
                content=b"bring snacks\n",
                headers={"Content-Type": "application/octet-stream"},
            )
            assert uploaded.status_code == 201, uploaded.text
            attachment = uploaded.json()["id"]
            sent = client.post(
                f"/api/conversations/{conversation}/messages", json={"text": "make a plan", "attachments": [attachment]}
            )
            assert sent.status_code == 202, sent.text
            deadline = time.monotonic() + 30
            while client.get(f"/api/conversations/{conversation}/messages").json()["running"]:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            markdown = client.get(f"/api/conversations/{conversation}/export", params={"format": "md"})
            assert markdown.status_code == 200
            assert (
                "attachment" in markdown.headers["content-disposition"]
                and "Plans.md" in markdown.headers["content-disposition"]
            )
            text = markdown.text
            assert text.startswith("# Plans") and "**You:**\n\nmake a plan" in text
            assert "**Orkas:**\n\nThe **plan** is ready." in text
            packed = client.get(f"/api/conversations/{conversation}/export", params={"format": "zip"})
            with zipfile.ZipFile(io.BytesIO(packed.content)) as bundle:
                names = bundle.namelist()
                data = json.loads(bundle.read("conversation.json"))
                stored = [n for n in names if n.startswith("attachments/")]
                assert len(stored) == 1 and bundle.read(stored[0]) == b"bring snacks\n"
            assert {"conversation.json", "conversation.md"} <= set(names)
            assert data["conversation"]["title"] == "Plans" and len(data["messages"]) == 2
            assert client.get(f"/api/conversations/{conversation}/export", params={"format": "exe"}).status_code == 422
            assert client.get("/api/conversations/nope/export", params={"format": "md"}).status_code == 404
            # Any script: a Chinese or emoji title answered 500 (a header is Latin-1), a Portuguese one lost letters.
            names = {"数据库迁移计划 🚀": "数据库迁移计划 🚀", "Migração do banco — plano": "Migração do banco — plano",
                     'a/b: "c"': "a_b_ _c_"}  # fmt: skip
            for title, expected in names.items():
                client.patch(f"/api/conversations/{conversation}", json={"title": title})
                for format in ("md", "zip"):
                    got = client.get(f"/api/conversations/{conversation}/export", params={"format": format})
                    assert got.status_code == 200, (title, format, got.text)
                    said = got.headers["content-disposition"]
                    named = unquote(said.split("filename*=UTF-8''", 1)[1])
                    assert named == f"{expected}.{format}", said
                    said.encode("ascii")  # the header itself stays ASCII
    finally:
        app.stop()

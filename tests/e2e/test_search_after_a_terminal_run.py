"""The sidebar's search keeps what each chat says in memory (issue 38) and learns of a change from the files
themselves: a chat that `orkas run --session ID` in a terminal went on with — another process writing the same
folder — is found by its new words the moment the terminal is done, with the snippet the window marks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx

from tests.big_chat import write_many_chats
from tests.conftest import subprocess_env
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import ORKAS, start_app


def test_a_chat_a_terminal_went_on_with_is_found_by_its_new_words(anthropic_server: FakeServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    chats = write_many_chats(home, 200)
    app = start_app(home, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    try:
        api = httpx.Client(base_url=app.base, headers={"X-Orkas-Token": app.token}, timeout=30)
        assert api.get("/api/search", params={"q": ""}).json() == []  # the search box focused: every chat read
        assert api.get("/api/search", params={"q": "marmalade"}).json() == []

        anthropic_server.script(a_wire.reply_text("Seville oranges make the best Marmalade, boiled twice."))
        keys = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": anthropic_server.url}
        env = subprocess_env(ORKAS_HOME=str(home), **keys)
        terminal = subprocess.run(
            [ORKAS, "run", "Which oranges for a quince jelly?", "--session", chats[17]],
            env=env,
            capture_output=True,
            text=True,
            cwd=home,
            timeout=120,
        )
        assert terminal.returncode == 0, terminal.stderr

        [hit] = api.get("/api/search", params={"q": "MARMALADE"}).json()  # asked once, no waiting
        assert hit["conversation"]["id"] == chats[17]
        assert hit["snippet"] == "Seville oranges make the best Marmalade, boiled twice."
        said = api.get(f"/api/conversations/{chats[17]}/messages").json()["messages"]
        assert hit["message_id"] == said[-1]["id"]  # the window opens the chat at that answer
        [asked] = api.get("/api/search", params={"q": "quince jelly"}).json()
        assert asked["conversation"]["id"] == chats[17] and asked["message_id"] == said[-2]["id"]
    finally:
        app.stop()

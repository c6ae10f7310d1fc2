"""Logs, crash reports and diagnostics bundles never hold a secret — with default settings, end to end.

Each kind of secret is planted where a path that logs will meet it: provider errors that echo keys,
tokens and passwords (the wire fake answers with them), a shell command's text, API requests (the launch
token, an email in a search, a key in a path), a wrong vault passphrase, a message's text at debug
level, a page crash. Then the whole data folder's logs, crash reports and bundles are searched.
Every test also checks that the path did log something, so none can pass by logging nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import subprocess_env
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import start_app

ORKAS = str(Path(sys.executable).parent / "orkas")

VAULT_KEY = "vk_7Q2-odd.shape~Z91x"  # no provider's shape: only knowing it is secret catches it
SECOND_KEY = "sk-ant-second-key-0000000042"
ENV_KEY = "plainlooking-env-key-5521"
PASSPHRASE = "correct horse 9913 staple"
WRONG_PASSPHRASE = "wrong horse 4410 battery"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkYW5hIn0.c2lnbmF0dXJlLXRlc3Q"
BEARER = "bearer-value-Xx9981"
URL_PASSWORD = "pw-in-url-4471"
EMAIL = "dana.q@example.org"
PHONE = "+44 20 7946 0958"
COMMAND = "MARKER-cmd-3381"
PATH_KEY = "sk-proj-pathsecretAAAABBBBCCCC"

PLANTED = [VAULT_KEY, SECOND_KEY, ENV_KEY, PASSPHRASE, WRONG_PASSPHRASE, JWT, BEARER, URL_PASSWORD, EMAIL]
PLANTED += [PHONE, COMMAND, PATH_KEY]


def orkas(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([ORKAS, *args], env=env, input=stdin, capture_output=True, text=True, timeout=90)


def leaky_error() -> a_wire.Reply:
    """A provider error that repeats what it was sent, as some gateways do."""
    return a_wire.error(
        401,
        "authentication_error",
        f"invalid x-api-key {VAULT_KEY}; upstream Authorization: Bearer {BEARER}; jwt {JWT}; "
        f"proxy https://gate:{URL_PASSWORD}@proxy.example.com/v1; contact {EMAIL}",
    )


def everything_written(home: Path) -> dict[str, str]:
    """Every log, crash report and diagnostics bundle member under `home`, by name."""
    found: dict[str, str] = {}
    for path in [*home.glob("logs/*.log"), *home.glob("crashes/*.json")]:
        found[str(path.relative_to(home))] = path.read_text(encoding="utf-8", errors="replace")
    for bundle in home.rglob("*.zip"):
        with zipfile.ZipFile(bundle) as opened:
            for name in opened.namelist():
                found[f"{bundle.name}/{name}"] = opened.read(name).decode("utf-8", "replace")
    return found


def assert_no_secret(home: Path, extra: tuple[str, ...] = ()) -> str:
    written = everything_written(home)
    assert written, "nothing was written at all"
    for name, text in written.items():
        for secret in (*PLANTED, *extra):
            assert secret not in text, f"{secret!r} in {name}"
    return "\n".join(written.values())


def test_cli_runs_and_a_bundle_with_default_settings_leak_nothing(anthropic_server: FakeServer, tmp_path: Path) -> None:
    env = subprocess_env(HOME=str(tmp_path))
    home = Path(env["ORKAS_HOME"])
    add = ["providers", "add", "anthropic", "--kind", "anthropic", "--base-url", anthropic_server.url]
    assert orkas(*add, "--model", "claude-test", "--key", "-", env=env, stdin=VAULT_KEY + "\n").returncode == 0
    assert orkas(*add, "--key", "-", env=env, stdin=SECOND_KEY + "\n").returncode == 0
    workspace = tmp_path / "project"
    workspace.mkdir()
    anthropic_server.script(
        leaky_error(),  # the first key: rotation to the second
        a_wire.message(a_wire.tool_use("bash", {"command": f"echo {COMMAND}"})),
        a_wire.reply_text(f"done; write to {EMAIL}"),
    )
    ran = orkas("run", f"mail {EMAIL} or call {PHONE}", "--workspace", str(workspace), env=env)
    assert ran.returncode == 0, ran.stderr
    assert COMMAND in ran.stderr  # the person sees the command; the log does not

    assert orkas("vault", "protect", env=env, stdin=f"{PASSPHRASE}\n{PASSPHRASE}\n").returncode == 0
    refused = orkas("run", "hi", env={**env, "ORKAS_VAULT_PASSPHRASE": WRONG_PASSPHRASE})
    assert refused.returncode != 0 and "passphrase" in refused.stderr

    bundle = orkas(
        "diagnostics", "--out", str(tmp_path / "report.zip"), env={**env, "ORKAS_VAULT_PASSPHRASE": PASSPHRASE}
    )
    assert bundle.returncode == 0, bundle.stderr
    assert bundle.stdout.strip() == str(tmp_path / "report.zip")
    (home / "report.zip").write_bytes((tmp_path / "report.zip").read_bytes())  # searched with the rest

    text = assert_no_secret(home)
    assert "provider call anthropic" in text and "rotating" in text  # the provider paths did log
    assert "tool bash ok" in text and "(input 20 chars)" in text  # the command: its size, not its text
    assert "vault unlock refused" in text
    assert "commands run confined by" in text
    with zipfile.ZipFile(tmp_path / "report.zip") as opened:
        names = opened.namelist()
        settings = json.loads(opened.read("settings.json"))
        checked = json.loads(opened.read("self-check.json"))
    assert {"README.txt", "about.json", "settings.json", "self-check.json"} <= set(names)
    assert any(name.startswith("logs/") for name in names)
    assert [e["has_key"] for e in settings["entries"]] == [True, True]
    assert checked["command in the sandbox"]["ok"] is True
    assert checked["providers"]["found"]["anthropic"].startswith("not checked")  # nothing called out


def test_the_server_at_debug_level_leaks_nothing(anthropic_server: FakeServer, tmp_path: Path) -> None:
    home = tmp_path / "data"
    anthropic_server.script(a_wire.reply_text("Noted."))
    app = start_app(
        home,
        HOME=str(tmp_path),
        ANTHROPIC_API_KEY=ENV_KEY,
        ANTHROPIC_BASE_URL=anthropic_server.url,
        ORKAS_LOG_LEVEL="debug",
    )
    try:
        headers = {"X-Orkas-Token": app.token}
        with httpx.Client(base_url=app.base, headers=headers, timeout=30) as client:
            conversation = client.post("/api/conversations", json={}).json()["id"]
            text = f"remember {EMAIL}, {PHONE} and Bearer {BEARER}"
            assert client.post(f"/api/conversations/{conversation}/messages", json={"text": text}).status_code == 202
            wait_until_idle(client, conversation)
            assert client.get("/api/search", params={"q": EMAIL}).status_code == 200
            assert httpx.get(f"{app.base}/api/conversations?token={app.token}").status_code == 401  # sockets only
            assert client.get(f"/api/conversations/{PATH_KEY}").status_code == 404
            assert (
                httpx.get(f"{app.base}/api/settings", headers={"X-Orkas-Token": "not-" + app.token}).status_code == 401
            )
            unlocked = client.post("/api/vault/unlock", json={"passphrase": WRONG_PASSPHRASE})
            assert unlocked.status_code in (200, 400, 403)
            crash = {"kind": "error", "message": f"TypeError at {JWT}", "stack": f"at send ({EMAIL}) {ENV_KEY}"}
            assert client.post("/api/crashes", json=crash).status_code == 201
            unseen = client.get("/api/crashes").json()["unseen"]
            assert len(unseen) == 1 and unseen[0]["source"] == "page"
            flood = [client.post("/api/crashes", json={"message": "loop"}).status_code for _ in range(25)]
            assert flood.count(201) == 19 and flood[-1] == 429  # a page in an error loop cannot fill the disk
            saved = client.post("/api/diagnostics", json={}).json()
            assert "name" in saved, saved
            downloaded = client.get(f"/api/diagnostics/{saved['name']}")
            assert downloaded.status_code == 200 and downloaded.content[:2] == b"PK"
            assert client.get("/api/diagnostics/..%2Fvault.bin").status_code == 404
    finally:
        app.stop()
    text = assert_no_secret(home, extra=(app.token,))
    assert "files: remember [email], [phone] and Bearer [secret]" in text  # the text at debug, redacted
    assert "POST /api/conversations" in text and "GET /api/settings 401" in text
    assert "[secret]" in text


def wait_until_idle(client: httpx.Client, conversation: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view: dict[str, Any] = client.get(f"/api/conversations/{conversation}/messages").json()
        if not view["running"] and any(m["role"] == "assistant" for m in view["messages"]):
            return view
        time.sleep(0.05)
    raise AssertionError(f"the run did not finish in {timeout} s")

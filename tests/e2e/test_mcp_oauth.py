"""Signing in to a hosted MCP server with OAuth, end to end: a real OAuth-protected MCP server written with the
official SDK's server-side auth pieces (tests/fixtures/oauth_mcp_server.py: protected-resource metadata,
discovery, dynamic registration, PKCE, refresh, revocation), `orkas mcp add --oauth` / `login` / `logout` as a
person runs them, and a real browser (Debian's chromium) that opens the printed page and logs in. Then `orkas run`
calls the server with the wire fake as the model: the token refreshed ahead of its expiry, a revoked sign-in said
as "sign in again", the tokens nowhere but in the (encrypted) vault."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.e2e.test_cli import orkas
from tests.e2e.test_connectors import env_for, results, text_of
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer
from tests.ui.conftest import ORKAS, free_port

VENDOR = Path(__file__).parents[1] / "fixtures" / "oauth_mcp_server.py"
PASSWORD = "correct horse"


class Vendor:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"{self.base}/mcp"

    def stats(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.base}/admin/stats", timeout=10).json())

    def revoke(self) -> None:
        assert httpx.post(f"{self.base}/admin/revoke", timeout=10).status_code == 200


@contextmanager
def vendor(access_ttl: int = 3600) -> Iterator[Vendor]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(VENDOR), "--port", str(port), "--access-ttl", str(access_ttl)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "the OAuth test server did not start"
                time.sleep(0.05)
        yield Vendor(port)
    finally:
        process.terminate()
        process.wait(timeout=10)


def signing_in(
    browser: Any, args: list[str], env: dict[str, str], cwd: Path, *, password: str = PASSWORD
) -> tuple[subprocess.CompletedProcess[str], str, str]:
    """Run an `orkas mcp` command that signs in, as a person would: open the page it prints in a browser and log
    in. Returns (the command's outcome, the page the browser was left on, the sign-in address)."""
    process = subprocess.Popen([ORKAS, "mcp", *args], env=env, cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdout is not None
    printed = []
    for line in process.stdout:  # the address comes on a line of its own, before it waits
        printed.append(line)
        if line.startswith("  http"):
            break
    else:
        out, err = process.communicate(timeout=60)
        pytest.fail(f"no address printed: {''.join(printed)}{out}\n{err}")
    address = printed[-1].strip()
    page = browser.new_page()
    try:
        page.goto(address)
        page.get_by_label("User").fill("ana")
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_selector("h1")
        if password == PASSWORD:
            page.wait_for_url("http://127.0.0.1:*/callback*")
        said = page.inner_text("body")
    finally:
        page.close()
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, "".join(printed) + out, err), said, address


def calls_whoami(server: FakeServer) -> None:
    call = {"server": "vendor", "tool": "whoami", "arguments": {}}
    server.script(a_wire.message(a_wire.tool_use("mcp_call", call, id="w0")), a_wire.reply_text("Done."))


def run_whoami(server: FakeServer, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    before = len(server.requests)
    calls_whoami(server)
    ran = orkas("run", "who am I there?", "--workspace", str(cwd / "ws"), env=env, cwd=cwd, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr, ran.stderr  # "sign in again" is said in words, not as the SDK's traceback
    [result] = results(server, before + 1)
    return result


def listed(env: dict[str, str], cwd: Path) -> dict[str, Any]:
    [row] = json.loads(orkas("mcp", "list", "--json", env=env, cwd=cwd).stdout)
    return dict(row)


def test_sign_in_call_refresh_revoked_sign_in_again_and_out(
    browser: Any, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    env = env_for(anthropic_server, tmp_path)
    # An access token that lives 121 s: Orkas refreshes 120 s ahead of expiry, so a second later it must.
    with vendor(access_ttl=121) as server:
        added, page, address = signing_in(browser, ["add", "vendor", "--url", server.url, "--oauth"], env, tmp_path)
        assert added.returncode == 0, added.stderr
        assert "added custom-vendor (remote)" in added.stdout and "signed in to vendor: 1 tools" in added.stdout
        assert "Signed in to vendor" in page  # the page tells the truth: it answered once the sign-in had worked
        asked = {k: v[0] for k, v in parse_qs(urlsplit(address).query).items()}
        assert asked["code_challenge_method"] == "S256" and asked["redirect_uri"].startswith("http://127.0.0.1:")
        callback = urlsplit(asked["redirect_uri"])
        with pytest.raises(OSError):  # the loopback port listened for that attempt only
            socket.create_connection(("127.0.0.1", callback.port or 0), 1).close()
        stats = server.stats()
        assert stats["registered"] == 1 and stats["code_grants"] == 1 and stats["refresh_grants"] == 0
        row = listed(env, tmp_path)
        assert row["oauth"] is True and row["signed_in"] is True and row["headers"] == []
        again, _, _ = signing_in(browser, ["login", "vendor"], env, tmp_path)  # signed in again: the old pair goes
        assert again.returncode == 0, again.stderr
        stats = server.stats()
        assert stats["live_refresh"] == 1 and stats["live_access"] == 1 and stats["revoked"] >= 1, stats

        time.sleep(1.2)  # the token is now inside the refresh margin (a clock, not an event: expiry is time)
        result = run_whoami(anthropic_server, env, tmp_path)
        assert "signed in as ana" in text_of(result) and not result.get("is_error"), result
        assert server.stats()["refresh_grants"] == 1  # refreshed before it was used, not after a refusal

        server.revoke()  # the vendor revoked the sign-in: the refresh is refused
        time.sleep(1.2)
        refused = run_whoami(anthropic_server, env, tmp_path)
        assert refused["is_error"] and "sign in again" in text_of(refused), refused
        assert "SignInNeeded" not in text_of(refused)  # words for the model and the person, not a type name
        row = listed(env, tmp_path)
        assert row["status"] == "signin" and "sign in again" in row["last_error"]
        assert "sign in again" in orkas("mcp", "list", env=env, cwd=tmp_path).stdout

        again, page, _ = signing_in(browser, ["login", "vendor"], env, tmp_path)  # after the revocation
        assert again.returncode == 0 and "signed in to vendor" in again.stdout, again.stderr
        assert listed(env, tmp_path)["status"] != "signin"
        assert "signed in as ana" in text_of(run_whoami(anthropic_server, env, tmp_path))

        tokens = server.stats()["issued"]
        assert len(tokens) >= 6
        for path in (tmp_path / "data").rglob("*"):  # never in connectors.json, the logs, the health file…
            if path.is_file():
                data = path.read_bytes()
                assert not any(token.encode() in data for token in tokens), path
        for text in (added.stdout, added.stderr, again.stdout, again.stderr):
            assert not any(token in text for token in tokens)
        report = tmp_path / "report.zip"  # a diagnostics bundle, as a bug report would carry
        assert orkas("diagnostics", "--out", str(report), env=env, cwd=tmp_path).returncode == 0
        with zipfile.ZipFile(report) as bundle:
            for name in bundle.namelist():
                assert not any(token.encode() in bundle.read(name) for token in tokens), name

        out = orkas("mcp", "logout", "vendor", env=env, cwd=tmp_path)
        assert out.returncode == 0 and "signed out of vendor (the server revoked it)" in out.stdout, out.stderr
        assert server.stats()["live_refresh"] == 0 and server.stats()["revoked"] >= 1
        assert listed(env, tmp_path)["signed_in"] is False
        after = run_whoami(anthropic_server, env, tmp_path)
        assert after["is_error"] and "needs you to sign in first" in text_of(after)
        assert "not signed in" in orkas("mcp", "logout", "vendor", env=env, cwd=tmp_path).stdout


def test_a_wrong_password_a_forged_return_and_no_sign_in_in_time_keep_nothing(
    browser: Any, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    env = env_for(anthropic_server, tmp_path)
    with vendor() as server:
        assert orkas("mcp", "add", "vendor", "--url", server.url, env=env, cwd=tmp_path).returncode == 0
        process = subprocess.Popen([ORKAS, "mcp", "login", "vendor", "--timeout", "8"], env=env, cwd=tmp_path,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert process.stdout is not None
        address = next(line for line in process.stdout if line.startswith("  http")).strip()
        asked = {k: v[0] for k, v in parse_qs(urlsplit(address).query).items()}
        back = asked["redirect_uri"]
        # Another program on this machine guesses the way back: without the attempt's state it is refused, and
        # the attempt goes on.
        forged = httpx.get(back, params={"code": "stolen", "state": "guess"}, timeout=10)
        assert forged.status_code == 400 and "not the sign-in Orkas is waiting for" in forged.text
        assert httpx.get(back.replace("/callback", "/other"), timeout=10).status_code == 404
        # Idle connections (a browser's preconnect, or a program opening many) end with the attempt, quietly.
        idle = [socket.create_connection(("127.0.0.1", urlsplit(back).port or 0), 5) for _ in range(40)]
        page = browser.new_page()
        page.goto(address)
        page.get_by_label("User").fill("ana")
        page.get_by_label("Password").fill("wrong")
        page.get_by_role("button", name="Sign in").click()
        page.get_by_text("Wrong user or password.").wait_for()
        page.close()
        _, err = process.communicate(timeout=60)  # the person gave up: the attempt ends at its deadline
        assert process.returncode == 1 and "no sign-in within 8 s" in err, err
        assert "Traceback" not in err and "ERROR" not in err, err
        for held in idle:
            held.close()
        assert server.stats()["code_grants"] == 0
        row = listed(env, tmp_path)
        assert row["oauth"] is True and row["signed_in"] is False  # `login` on a plain remote server turned it on
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", urlsplit(back).port or 0), 1).close()
        local = orkas("mcp", "login", "nope", env=env, cwd=tmp_path)
        assert local.returncode == 2 and "no connector 'nope'" in local.stderr

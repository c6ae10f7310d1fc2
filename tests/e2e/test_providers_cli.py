"""`orkas providers …` end to end: keys in the vault, pools in the settings, rotation in a real run."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import subprocess_env
from tests.fakes import anthropic as a_wire
from tests.fakes import openai as o_wire
from tests.fakes.server import FakeServer

ORKAS = str(Path(sys.executable).parent / "orkas")
KEY_ONE = "sk-ant-FIRST-very-secret-key-111111"
KEY_TWO = "sk-ant-SECOND-very-secret-key-222222"


def orkas(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([ORKAS, *args], env=env, input=stdin, capture_output=True, text=True, timeout=60)


def test_keys_live_in_the_vault_and_rotate_in_a_run(anthropic_server: FakeServer) -> None:
    env = subprocess_env()
    home = Path(env["ORKAS_HOME"])
    base = [
        "providers",
        "add",
        "anthropic",
        "--kind",
        "anthropic",
        "--base-url",
        anthropic_server.url,
        "--model",
        "claude-test",
        "--key",
        "-",
    ]
    first = orkas(*base, env=env, stdin=KEY_ONE + "\n")
    assert first.returncode == 0, first.stderr
    assert "anthropic#1 sk-…1111" in first.stdout and KEY_ONE not in first.stdout
    assert orkas(*base, env=env, stdin=KEY_TWO + "\n").returncode == 0

    listed = orkas("providers", "list", env=env)
    assert "keys: anthropic#1 sk-…1111, anthropic#2 sk-…2222" in listed.stdout
    assert KEY_ONE not in listed.stdout and KEY_TWO not in listed.stdout
    entries = json.loads((home / "settings.json").read_text())["entries"]
    assert [e["credential"] for e in entries] == ["anthropic#1", "anthropic#2"]
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert KEY_ONE.encode() not in data and KEY_TWO.encode() not in data, path

    anthropic_server.script(
        a_wire.error(401, "authentication_error", "invalid x-api-key"),
        a_wire.reply_text("answered with the second key"),
    )
    result = orkas("run", "hi", "--json", env=env)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    fallback = next(e for e in events if e["type"] == "provider_fallback")
    assert fallback["reason"] == "auth" and fallback["using"] == "anthropic/claude-test (anthropic#2)"
    assert events[-2]["type"] == "done" and events[-2]["text"] == "answered with the second key"
    assert KEY_ONE not in result.stdout + result.stderr

    # Test makes a real, minimal request with each key (not a GET any server would answer).
    anthropic_server.script(a_wire.error(401, "authentication_error", "invalid x-api-key"), a_wire.reply_text("OK"))
    tested = orkas("providers", "test", "anthropic", env=env)
    assert tested.returncode == 1
    assert (
        "anthropic#1: anthropic: invalid x-api-key (HTTP 401)" in tested.stdout and "anthropic#2: ok" in tested.stdout
    )

    removed = orkas("providers", "remove", "anthropic", env=env)
    assert removed.returncode == 0 and "no providers configured" in orkas("providers", "list", env=env).stdout


def test_a_damaged_vault_is_reported_and_the_environment_still_works(anthropic_server: FakeServer) -> None:
    env = subprocess_env()
    home = Path(env["ORKAS_HOME"])
    assert (
        orkas(
            "providers", "add", "anthropic", "--kind", "anthropic", "--key", "-", env=env, stdin=KEY_ONE + "\n"
        ).returncode
        == 0
    )
    (home / "vault.bin").write_text("{damaged")
    anthropic_server.script(a_wire.reply_text("via the environment"))
    env.update(ANTHROPIC_API_KEY="env-key", ANTHROPIC_BASE_URL=anthropic_server.url)
    result = orkas("run", "hi", "--model", "anthropic/claude-test", env=env)
    assert result.returncode == 0, result.stderr
    assert "vault" in result.stderr and "damaged" in result.stderr and result.stdout == "via the environment\n"


def test_local_servers_are_detected_and_added(openai_server: FakeServer) -> None:
    from tests.fakes.server import json_reply

    openai_server.path = "/v1/models"
    openai_server.responder = lambda _request: json_reply(200, {"data": [{"id": "qwen3:8b"}, {"id": "llama3.2"}]})
    env = subprocess_env(ORKAS_LOCAL_SERVERS=f"ollama={openai_server.url}/v1,lmstudio=http://127.0.0.1:9/v1")
    found = orkas("providers", "detect", "--add", env=env)
    assert found.returncode == 0, found.stderr
    assert f"ollama at {openai_server.url}/v1: qwen3:8b, llama3.2" in found.stdout and "lmstudio" not in found.stdout
    listed = orkas("providers", "list", env=env)
    assert "ollama (openai-compatible at" in listed.stdout and "keys: none" in listed.stdout
    assert "order: ollama/qwen3:8b → ollama/llama3.2" in listed.stdout


@pytest.mark.parametrize("kind", ["anthropic", "openai-compatible"])
def test_a_base_url_with_a_password_sends_it_and_the_key_and_never_shows_it(
    kind: str, anthropic_server: FakeServer, openai_server: FakeServer
) -> None:
    server = anthropic_server if kind == "anthropic" else openai_server
    env = subprocess_env()
    home = Path(env["ORKAS_HOME"])
    password = "gateway-pw-5e1f"
    url = server.url.replace("http://", f"http://ana:{password}@")
    added = orkas("providers", "add", "gw", "--kind", kind, "--base-url", url, "--model", "m1", "--key", "-",
                  env=env, stdin=KEY_ONE + "\n")  # fmt: skip
    assert added.returncode == 0, added.stderr
    listed = orkas("providers", "list", env=env)
    assert password not in listed.stdout + added.stdout and "with a user and password" in listed.stdout
    for path in home.rglob("*"):
        if path.is_file():
            assert password.encode() not in path.read_bytes(), path  # in the vault only (encrypted)
    server.script(a_wire.reply_text("hi") if kind == "anthropic" else o_wire.reply_text("hi"))
    ran = orkas("run", "hi", "--model", "gw/m1", env=env)
    assert ran.returncode == 0, ran.stderr
    headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    sent_key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
    assert sent_key == KEY_ONE
    expected = base64.b64encode(f"ana:{password}".encode()).decode()
    assert headers["proxy-authorization"] == f"Basic {expected}"
    assert password not in ran.stdout + ran.stderr


def test_a_provider_the_environment_sets_is_listed_with_its_variable_not_its_key(tmp_path: Path) -> None:
    env = subprocess_env(ORKAS_HOME=str(tmp_path / "home"), ANTHROPIC_API_KEY="sk-ant-secret-value")
    listed = orkas("providers", "list", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "anthropic" in listed.stdout and "from the environment" in listed.stdout
    assert "$ANTHROPIC_API_KEY" in listed.stdout and "secret-value" not in listed.stdout
    assert "no providers configured" not in listed.stdout

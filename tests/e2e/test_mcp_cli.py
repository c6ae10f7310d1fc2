"""`orkas mcp` for the connectors a person adds: both forms, secrets in the vault and nowhere else under the
data folder, the local command confirmed, a Claude-Desktop import, and bad input refused with the reason."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import subprocess_env
from tests.e2e.test_cli import orkas

SECRET = "sk-live-9f8e7d6c5b4a"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return subprocess_env(ORKAS_HOME=str(tmp_path / "data"), HOME=str(tmp_path))


def listed(env: dict[str, str], cwd: Path) -> dict[str, dict[str, object]]:
    return {c["id"]: c for c in json.loads(orkas("mcp", "list", "--json", env=env, cwd=cwd).stdout)}


def test_add_list_disable_remove_with_secrets_only_in_the_vault(env: dict[str, str], tmp_path: Path) -> None:
    remote = orkas("mcp", "add", "Notion", "--url", "https://mcp.example.org/mcp",
                   "--header", f"Authorization=Bearer {SECRET}", env=env, cwd=tmp_path)  # fmt: skip
    assert remote.returncode == 0 and "custom-notion (remote)" in remote.stdout, remote.stderr
    local = orkas("mcp", "add", "files", "--command", "python3 -m files_server --root /srv",
                  "--env", f"TOKEN={SECRET}x", "--yes", env=env, cwd=tmp_path)  # fmt: skip
    assert local.returncode == 0, local.stderr
    rows = listed(env, tmp_path)
    assert rows["custom-notion"]["headers"] == ["Authorization"] and rows["custom-files"]["env"] == ["TOKEN"]
    assert rows["custom-files"]["command"] == ["python3", "-m", "files_server", "--root", "/srv"]
    for root, _dirs, files in os.walk(tmp_path / "data"):
        for name in files:
            assert SECRET.encode() not in (Path(root) / name).read_bytes(), name  # the vault is encrypted
    assert orkas("mcp", "disable", "notion", env=env, cwd=tmp_path).returncode == 0
    assert listed(env, tmp_path)["custom-notion"]["enabled"] is False
    assert orkas("mcp", "remove", "notion", env=env, cwd=tmp_path).returncode == 0
    assert "custom-notion" not in listed(env, tmp_path)
    missing = orkas("mcp", "remove", "notion", env=env, cwd=tmp_path)
    assert missing.returncode == 2 and "no connector 'notion'" in missing.stderr


def test_a_local_command_is_confirmed_and_shown(env: dict[str, str], tmp_path: Path) -> None:
    refused = orkas("mcp", "add", "runner", "--command", "node server.js --port 1", env=env, cwd=tmp_path)
    assert refused.returncode == 2 and "`node server.js --port 1`" in refused.stderr and "--yes" in refused.stderr
    assert listed(env, tmp_path) == {}


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--url", "http://example.org/mcp"], "plain http only to this machine"),
        (["--url", "ftp://example.org"], "https://"),
        (["--url", "https://x.example", "--header", "X-A=1\r\nX-B: 2"], "line break"),
        (["--url", "https://x.example", "--header", "novalue"], "NAME=VALUE"),
        (["--url", "https://x.example", "--header", "X=" + "v" * 5000], "4,096"),
        (["--url", "https://x.example", "--command", "x"], "either --url"),
        ([], "either --url"),
        (["--command", "  ", "--yes"], "empty"),
        (["--command", "x", "--cwd", "/no/such/folder", "--yes"], "not a folder"),
    ],
)
def test_bad_input_is_refused_with_the_reason(env: dict[str, str], tmp_path: Path, args: list[str], why: str) -> None:
    result = orkas("mcp", "add", "bad", *args, env=env, cwd=tmp_path)
    assert result.returncode == 2 and why in result.stderr, result.stderr
    assert listed(env, tmp_path) == {}


def test_loopback_http_and_too_many_headers(env: dict[str, str], tmp_path: Path) -> None:
    assert (
        orkas("mcp", "add", "local-http", "--url", "http://127.0.0.1:8123/mcp", env=env, cwd=tmp_path).returncode == 0
    )
    many = [arg for n in range(65) for arg in ("--header", f"H{n}=v")]
    result = orkas("mcp", "add", "many", "--url", "https://x.example", *many, env=env, cwd=tmp_path)
    assert result.returncode == 2 and "at most 64" in result.stderr


def test_a_claude_desktop_config_imports_each_server(env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"K": "v"}},
        "web": {"url": "https://mcp.example.org", "headers": {"Authorization": f"Bearer {SECRET}"}},
        "broken": {"args": []},
    }}))  # fmt: skip
    unconfirmed = orkas("mcp", "import", str(config), env=env, cwd=tmp_path)
    assert "custom-web" in unconfirmed.stdout and "confirm in a terminal" in unconfirmed.stderr
    assert "broken: neither a command nor a url" in unconfirmed.stderr
    imported = orkas("mcp", "import", str(config), "--yes", env=env, cwd=tmp_path)
    rows = listed(env, tmp_path)
    assert rows["custom-fs"]["command"][:2] == ["npx", "-y"] and "custom-web" in rows, imported.stderr

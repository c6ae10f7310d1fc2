"""The connector hub against real MCP servers written with the SDK (tests/fixtures/mcp_server.py), as
subprocesses over stdio and over streamable HTTP: tools listed and called, health measured (a crash mid-call,
a process killed while idle, back-off persisted across a restart, recovery), Stop during a slow call."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from orkas.adapter.connectors.config import Connectors
from orkas.adapter.connectors.health import HealthFile, backoff
from orkas.adapter.connectors.hub import ConnectorHub
from orkas.adapter.settings.vault import Vault, choose_key_source
from orkas.app import connector_hub, settings_from_env
from orkas.core.errors import ToolInputError
from orkas.engine.abort import AbortSignal
from orkas.engine.messages import ImageBlock, TextBlock
from orkas.engine.tools.connectors import ConnectorError

SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_server.py"


def hub_for(data: Path, base: float = 30.0) -> ConnectorHub:
    return connector_hub(settings_from_env({"ORKAS_HOME": str(data), "ORKAS_MCP_BACKOFF": str(int(base)),
                                            "PATH": os.environ["PATH"]}))  # fmt: skip


def add_local(
    data: Path, name: str = "test", *extra: str, env: dict[str, str] | None = None, folders: tuple[Path, ...] = ()
) -> None:
    vault = Vault(data / "vault.bin", choose_key_source(data))
    argv = [sys.executable, str(SERVER), *extra]
    Connectors(data / "connectors.json", vault).add(name, command=argv, env=env, folders=[str(f) for f in folders])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port), "--require-header", "X-Key=sekret-42"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()


async def test_a_local_server_lists_and_calls_with_text_images_and_errors(tmp_path: Path) -> None:
    data = tmp_path / "data"
    out = tmp_path / "out"
    out.mkdir()
    env_file = out / "env.json"
    add_local(data, "test", "--env-file", str(env_file), env={"TOKEN": "tok-123"}, folders=(out,))
    hub = hub_for(data)
    try:
        [listing] = await hub.servers(None)
        assert listing.status == "connected" and {"echo", "add", "write_note", "look"} <= {
            t.name for t in listing.tools
        }
        echo = await hub.tool("test", "echo")
        assert echo.read_only and not (await hub.tool("test", "add")).read_only
        said = await hub.call(echo, {"text": "hi"}, AbortSignal())
        assert said.content == (TextBlock(text="echo: hi"),) and not said.is_error
        picture = await hub.call(await hub.tool("test", "look"), {}, AbortSignal())
        assert isinstance(picture.content[0], ImageBlock) and picture.content[0].media_type == "image/png"
        wrong = await hub.call(await hub.tool("test", "add"), {"a": "x", "b": 1}, AbortSignal())
        assert wrong.is_error  # the server's own error: a result the model reads, not a health problem
        assert (await hub.status())[0]["status"] == "connected"
        import json

        seen = json.loads(env_file.read_text())
        assert seen["TOKEN"] == "tok-123" and "ORKAS_HOME" not in seen  # its own values, nothing of ours
        with pytest.raises(ToolInputError, match="no tool of test 'nope'"):
            await hub.tool("test", "nope")
        with pytest.raises(ToolInputError, match="no server 'other'; the servers are: test"):
            await hub.tool("other", "echo")
    finally:
        await hub.close()
    assert HealthFile(data / "connector-health.json").get("custom-test").status == "disconnected"


async def test_a_crash_mid_call_degrades_backs_off_persists_and_recovers(tmp_path: Path) -> None:
    data = tmp_path / "data"
    add_local(data)
    hub = hub_for(data, base=1)
    try:
        with pytest.raises(ConnectorError, match="process exited during the call"):
            await hub.call(await hub.tool("test", "crash"), {}, AbortSignal())
        [row] = await hub.status()
        assert row["status"] == "degraded" and row["retry_in"] >= 0 and "exited" in row["last_error"]
        with pytest.raises(ConnectorError, match=r"unavailable .*next try is in"):
            await hub.tool("test", "echo")  # backing off: not even tried
    finally:
        await hub.close()
    restarted = hub_for(data, base=1)  # a new process reads the same deadline
    try:
        health = HealthFile(data / "connector-health.json").get("custom-test")
        assert health.failures == 1 and health.status == "degraded"
        if health.waiting(time.time()) > 0:
            with pytest.raises(ConnectorError, match="unavailable"):
                await restarted.tool("test", "echo")
        await asyncio.sleep(health.waiting(time.time()) + 0.1)
        again = await restarted.call(await restarted.tool("test", "echo"), {"text": "back"}, AbortSignal())
        assert again.content == (TextBlock(text="echo: back"),)
        assert (await restarted.status())[0]["status"] == "connected"
        assert HealthFile(data / "connector-health.json").get("custom-test").failures == 0
    finally:
        await restarted.close()


async def test_a_server_killed_while_idle_never_shows_connected(tmp_path: Path) -> None:
    data = tmp_path / "data"
    tag = uuid.uuid4().hex
    add_local(data, "test", "--tag", tag)
    hub = hub_for(data)
    try:
        await hub.servers(None)
        assert (await hub.status())[0]["status"] == "connected"
        subprocess.run(["pkill", "-KILL", "-f", tag], check=True)
        deadline = time.monotonic() + 5
        while (await hub.status())[0]["status"] == "connected" and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        row = (await hub.status())[0]
        assert row["status"] == "degraded" and "exited" in row["last_error"]
    finally:
        await hub.close()


async def test_connected_written_by_a_process_that_is_gone_reads_as_disconnected(tmp_path: Path) -> None:
    health = HealthFile(tmp_path / "h.json")
    health.succeeded("custom-x", 3)
    dead = subprocess.Popen(["true"])
    dead.wait()
    import json

    raw = json.loads(health.path.read_text())
    raw["servers"]["custom-x"]["holder"] = dead.pid
    health.path.write_text(json.dumps(raw))
    assert health.get("custom-x").status == "disconnected"
    assert [backoff(n) for n in (1, 2, 3, 7, 8, 20)] == [30, 60, 120, 1800, 1800, 1800]


async def test_stop_cancels_a_slow_call_and_the_server_stays_usable(tmp_path: Path) -> None:
    data = tmp_path / "data"
    add_local(data)
    hub = hub_for(data)
    try:
        stop = AbortSignal()
        asyncio.get_running_loop().call_later(0.5, stop.abort)
        started = time.monotonic()
        with pytest.raises(ConnectorError, match="stopped by the person"):
            await hub.call(await hub.tool("test", "slow"), {"seconds": 30}, stop)
        assert time.monotonic() - started < 5
        echo = await hub.call(await hub.tool("test", "echo"), {"text": "still here"}, AbortSignal())
        assert echo.content == (TextBlock(text="echo: still here"),)
    finally:
        await hub.close()


async def test_a_server_that_will_not_start_says_why(tmp_path: Path) -> None:
    data = tmp_path / "data"
    Connectors(data / "connectors.json", None).add("gone", command=["/no/such/server", "--x"])
    hub = hub_for(data)
    try:
        [listing] = await hub.servers(None)
        assert listing.status == "error" and "No such file or directory" in (listing.error or "")
        [row] = await hub.status()
        assert row["status"] == "error" and row["retry_in"] > 20
    finally:
        await hub.close()


async def test_a_remote_server_gets_its_header_from_the_vault(tmp_path: Path, http_server: str) -> None:
    data = tmp_path / "data"
    vault = Vault(data / "vault.bin", choose_key_source(data))
    connectors = Connectors(data / "connectors.json", vault)
    connectors.add("web", url=http_server, headers={"X-Key": "sekret-42"})
    connectors.add("wrong", url=http_server, headers={"X-Key": "nope"})
    hub = hub_for(data)
    try:
        by_name = {s.server: s for s in await hub.servers(None)}
        assert by_name["web"].status == "connected" and len(by_name["web"].tools) >= 7
        assert by_name["wrong"].status == "error"
        total = await hub.call(await hub.tool("web", "add"), {"a": 2, "b": 40}, AbortSignal())
        assert total.content == (TextBlock(text="42"),)
    finally:
        await hub.close()
    for root, _dirs, files in os.walk(data):
        for name in files:
            assert b"sekret-42" not in (Path(root) / name).read_bytes(), name


async def test_a_remote_server_that_goes_away_is_degraded(tmp_path: Path) -> None:
    data = tmp_path / "data"
    port = free_port()
    process = subprocess.Popen([sys.executable, str(SERVER), "--http", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        Connectors(data / "connectors.json", None).add("web", url=f"http://127.0.0.1:{port}/mcp")
        hub = hub_for(data)
        try:
            add = await hub.tool("web", "add")
            process.send_signal(signal.SIGKILL)
            process.wait()
            with pytest.raises(ConnectorError):
                await hub.call(add, {"a": 1, "b": 1}, AbortSignal())
            assert (await hub.status())[0]["status"] == "degraded"
        finally:
            await hub.close()
    finally:
        process.kill()
        process.wait()

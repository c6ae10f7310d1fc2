"""The guard that keeps every test away from real providers really does."""

from __future__ import annotations

import socket
import subprocess
import sys

import httpx
import netguard
import pytest

from tests.conftest import subprocess_env


async def test_a_real_provider_host_is_refused_and_recorded() -> None:
    # Checked first so that a broken install can never let the request below leave the machine.
    assert getattr(socket.getaddrinfo, "__name__", "") == "getaddrinfo" and socket.getaddrinfo.__module__ == "netguard"
    before = len(netguard.attempts)
    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient() as client:
            await client.get("https://api.anthropic.com/v1/models")
    assert netguard.attempts[before:] == ["'api.anthropic.com'"]
    del netguard.attempts[before:]  # expected here; any other test doing this fails at teardown


def test_loopback_stays_open() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=2):
            pass


def test_subprocesses_get_the_guard() -> None:
    code = "import socket; print(socket.getaddrinfo.__module__, getattr(socket.socket.connect, '_orkas_guard', 0))"
    result = subprocess.run([sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True)
    assert result.stdout.split() == ["netguard", "True"], result.stderr

"""Refuse every socket connection that is not to this machine, and remember the attempt.

Installed in the test process by conftest.py and in CLI subprocesses through sitecustomize.py,
so no test can reach a real model provider, whatever environment it inherits.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from typing import Any

attempts: list[str] = []
MARKER = "NETWORK-GUARD: blocked connection to"


def _is_local(address: Any, family: int) -> bool:
    if family == socket.AF_UNIX:
        return True
    host = address[0] if isinstance(address, tuple) else address
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def install() -> None:
    if getattr(socket.socket.connect, "_orkas_guard", False):
        return
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if not _is_local(address, sock.family):
            attempts.append(repr(address))
            print(f"{MARKER} {address!r}", file=sys.stderr, flush=True)
            raise ConnectionRefusedError(f"{MARKER} {address!r}")

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return original_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        # Name lookups come first: refuse them too, or a blocked host would look like a DNS failure.
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and not _is_local((name, 0), socket.AF_INET):
            attempts.append(repr(name))
            print(f"{MARKER} {name!r}", file=sys.stderr, flush=True)
            raise socket.gaierror(socket.EAI_NONAME, f"{MARKER} {name!r}")
        return original_getaddrinfo(host, *args, **kwargs)

    connect._orkas_guard = True  # type: ignore[attr-defined]
    socket.getaddrinfo = getaddrinfo
    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]

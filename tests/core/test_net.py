"""The servers' listening sockets: what asyncio does with the connections they accept depends on how they are made."""

from __future__ import annotations

import asyncio
import socket

import pytest

from orkas.core.net import bind_lan, bind_local


@pytest.mark.parametrize("bind", [lambda: bind_local()[0], lambda: bind_lan("127.0.0.1")], ids=["local", "lan"])
async def test_an_accepted_connection_sends_at_once(bind: object) -> None:
    # Left with Nagle's algorithm, a response's body waited for the client's delayed acknowledgement of its head:
    # ~40 ms on every request over a kept-alive connection. asyncio turns it off only on sockets that say TCP.
    listener: socket.socket = bind()  # type: ignore[operator]
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            accepted.set_result(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
    try:
        _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        assert await asyncio.wait_for(accepted, 10) != 0
        writer.close()
    finally:
        server.close()
        await server.wait_closed()

"""Both servers take the client's address from the connection, never from a header: no proxy stands in front of
them, and the mirror's pairing lockout counts by address (a local process sending X-Forwarded-For could dodge it,
or lock someone else out)."""

from __future__ import annotations

import asyncio

import httpx
from starlette.requests import Request
from starlette.responses import PlainTextResponse

from orkas.core.net import bind_local
from orkas.server.connections import Server, server_config
from orkas.server.routing import Api


async def test_x_forwarded_for_is_not_the_client_address() -> None:
    api = Api()

    @api.get("/who", response_class=PlainTextResponse)
    async def who(request: Request) -> str:
        return request.client.host if request.client else ""

    listener, _, _ = bind_local()
    server = Server(server_config(api))
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        host, port = listener.getsockname()[:2]
        async with httpx.AsyncClient() as client:
            answer = await client.get(f"http://{host}:{port}/who", headers={"X-Forwarded-For": "10.0.1.7"})
        assert answer.text == "127.0.0.1"
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 10)
        listener.close()

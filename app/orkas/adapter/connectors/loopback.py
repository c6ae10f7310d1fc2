"""The browser's way back from a sign-in page: `http://127.0.0.1:<port>/callback`, on a port opened for one
attempt only (RFC 8252's loopback redirect). It takes the redirect that carries the attempt's `state` (another
program guessing the address gets a refusal), holds the browser's answer until the sign-in has finished so the
page tells the truth, and closes with the attempt."""

from __future__ import annotations

import asyncio
import contextlib
import html
from urllib.parse import parse_qs, urlsplit

from orkas.engine.tools.connectors import ConnectorError

CALLBACK_PATH = "/callback"
MAX_REQUEST = 16 * 1024  # bytes of the browser's request to the loopback port
MAX_OPEN = 16  # connections at once: a browser opens a few; past this the oldest is dropped


class Loopback:
    """The browser's way back: `http://127.0.0.1:<port>/callback`, listening for this attempt only. It answers
    the redirect carrying the expected `state` once the sign-in has finished (so the page tells the truth), and
    anything else with a refusal."""

    def __init__(self, server_name: str) -> None:
        self.server_name = server_name
        self.expected_state: str | None = None
        self.code: asyncio.Future[tuple[str, str | None]] = asyncio.get_running_loop().create_future()
        self.outcome: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._server: asyncio.Server | None = None
        self._open: dict[asyncio.StreamWriter, None] = {}  # oldest first
        self._answering: set[asyncio.Task[None]] = set()  # the browser's return, waiting to be told how it went
        self.port = 0

    async def __aenter__(self) -> Loopback:
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_: object) -> None:
        if not self.outcome.done():
            self.outcome.set_result("The sign-in did not finish. Go back to Orkas and try again.")
        assert self._server is not None
        self._server.close()
        if self._answering:  # the browser that came back is told how it went before the port closes
            await asyncio.wait(self._answering, timeout=5.0)
        for writer in list(self._open):  # an idle connection (a browser's preconnect) ends with the attempt, quietly
            writer.transport.abort()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 5.0)

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._open) >= MAX_OPEN:  # the oldest goes (a flood only ever evicts its own): the browser gets in
            next(iter(self._open)).transport.abort()
        self._open[writer] = None
        try:
            await self._read(reader, writer)
        except (asyncio.CancelledError, ConnectionError):
            pass  # the attempt ended under it, or the other side went: nothing to answer
        finally:
            self._open.pop(writer, None)
            with contextlib.suppress(Exception):
                writer.close()

    async def _read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10.0)
            if len(head) > MAX_REQUEST:
                raise ValueError("too long")
            method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            parts = urlsplit(target)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if method != "GET" or parts.path != CALLBACK_PATH:
                await _page(writer, 404, "Not found", "This address is only for signing in to Orkas.")
                return
            if self.expected_state is None or query.get("state") != self.expected_state or self.code.done():
                await _page(writer, 400, "Not this sign-in", "This is not the sign-in Orkas is waiting for.")
                return
            if "error" in query:
                why = query.get("error_description") or query["error"]
                self.code.set_exception(ConnectorError(f"{self.server_name} did not sign you in: {why}"))
                await _page(writer, 200, "Not signed in", f"{self.server_name} said: {why}. You can close this tab.")
                return
            if not query.get("code"):
                await _page(writer, 400, "Not signed in", "The sign-in came back without a code.")
                return
            self.code.set_result((query["code"], query.get("iss")))
            self._open.pop(writer, None)  # no longer idle: never cut, never evicted
            task = asyncio.current_task()
            if task is not None:
                self._answering.add(task)
            said = await asyncio.shield(self.outcome)
            title = "Signed in" if said.startswith("Signed in") else "Not signed in"
            await _page(writer, 200, title, said)
        except (ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            with contextlib.suppress(Exception):
                await _page(writer, 400, "Bad request", "Orkas could not read this request.")


async def _page(writer: asyncio.StreamWriter, status: int, title: str, text: str) -> None:
    body = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)} — Orkas</title>'
        f'<meta name="viewport" content="width=device-width"></head><body style="font-family:sans-serif;'
        f'max-width:32em;margin:4em auto"><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>'
    ).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}.get(status, "OK")
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
        "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()

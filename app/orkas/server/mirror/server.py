"""Running the phone mirror: its own uvicorn server, over TLS, on an address of this machine, in the
same event loop as the desktop API (so both see the same runs). Off until the person turns it on
(Settings → Phone, or `orkas serve --mirror`); turning it off closes its sockets."""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import uvicorn

from orkas.core.net import bind_lan, own_addresses
from orkas.core.tls import Certificate, ensure_certificate
from orkas.server.connections import Server, server_config

if TYPE_CHECKING:
    from orkas.phone.client import Target

log = logging.getLogger(__name__)


class MirrorServer:
    def __init__(
        self, make_app: Callable[[int, set[str], Target], Any], cert_folder: Any, host: str, port: int
    ) -> None:
        self.make_app = make_app
        self.cert_folder = cert_folder
        self.host = host
        self.port = port
        self.listener: socket.socket | None = None
        self.server: uvicorn.Server | None = None
        self.task: asyncio.Task[None] | None = None
        self.certificate: Certificate | None = None

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def bind(self) -> None:
        """Open the socket and the certificate now (before serving), so the URL can be printed at once."""
        if self.listener is not None:
            return
        addresses = own_addresses() | ({self.host} if self.host not in ("0.0.0.0", "::") else set())
        self.certificate = ensure_certificate(self.cert_folder, tuple(sorted(addresses)))
        self.listener = bind_lan(self.host, self.port)
        port = self.listener.getsockname()[1]
        # The phone view's own session reaches the API through the same door a phone does, on loopback.
        inner = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(
            self.host, f"[{self.host}]" if ":" in self.host else self.host
        )
        from orkas.phone.client import Target  # httpx and websockets' client load with the mirror

        target = Target(base=f"https://{inner}:{port}", cafile=self.certificate.cert)
        config = server_config(
            self.make_app(port, addresses, target),
            ssl_certfile=str(self.certificate.cert),
            ssl_keyfile=str(self.certificate.key),
        )
        self.server = Server(config)

    @property
    def url(self) -> str:
        if self.listener is None:
            return ""
        port = self.listener.getsockname()[1]
        host = self.host if self.host not in ("0.0.0.0", "::") else _lan_address()
        return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"

    def start(self) -> None:
        """Serve on the running loop (call from it)."""
        self.bind()
        if self.running or self.server is None or self.listener is None:
            return
        self.server.should_exit = False
        from orkas.phone import app as phone  # Flet loads with the mirror, not with the app

        phone.welcome()
        asyncio.get_running_loop().create_task(phone.start())
        self.task = asyncio.get_running_loop().create_task(self.server.serve(sockets=[self.listener]))
        log.info("phone mirror on %s", self.url)

    async def stop(self, *, quitting: bool = False) -> None:
        """`quitting`: the app ends, and the phones' sessions end first (their own requests to the mirror would hold
        its shutdown). Turned off in Settings, the sessions stay: turned on again, an open phone view rejoins its own
        (closed, its client reloaded twice and the first load was aborted)."""
        phone = sys.modules.get("orkas.phone.app")  # never loaded: no view was served, none to end (nor load Flet)
        if phone is not None:
            if self.running and quitting:
                await phone.stop()
            phone.let_go()  # an open view's connection ends now, not at the end of the server's grace period
        if self.server is not None:
            getattr(self.server.config.app, "going_away", lambda: None)()  # and the API's open sockets
        if self.server is not None:
            self.server.should_exit = True
        if self.task is not None:
            await asyncio.wait({self.task}, timeout=5)
        self.task = None
        if self.listener is not None:
            self.listener.close()
        self.listener = None
        self.server = None


def _lan_address() -> str:
    """The address a phone on the same network would use: the LAN one, else loopback."""
    candidates = sorted(a for a in own_addresses() if ":" not in a and not a.startswith("127."))
    return candidates[0] if candidates else "127.0.0.1"

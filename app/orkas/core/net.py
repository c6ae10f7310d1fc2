"""The app's one listening socket: 127.0.0.1 only, with a fresh secret token per launch."""

from __future__ import annotations

import secrets
import socket


def bind_local(port: int = 0) -> tuple[socket.socket, str, str]:
    """A listening socket on 127.0.0.1, this launch's token and the URL to open. Connections wait in
    the backlog until a server runs on it, so a window may start loading the URL at once."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    token = secrets.token_urlsafe(32)
    return listener, token, f"http://127.0.0.1:{listener.getsockname()[1]}/?token={token}"

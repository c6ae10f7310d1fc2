"""The app's listening sockets: the desktop API on 127.0.0.1 only, with a fresh secret token per launch;
the phone mirror's on an address of this machine (`own_addresses`), when the person turns it on."""

from __future__ import annotations

import ipaddress
import secrets
import socket
from pathlib import Path


def own_addresses() -> set[str]:
    """This machine's own IP addresses: loopback, the LAN and any VPN (WireGuard, Tailscale) interface.
    Read from the interfaces where the system tells (Linux), and from the host name and the address a LAN
    route would use (no packet is sent)."""
    found = {"127.0.0.1", "::1"} | _interface_addresses()
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None):
            found.add(str(info[4][0]).split("%")[0])
    except OSError:
        pass
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))  # UDP connect sends nothing: it only picks a route
            found.add(probe.getsockname()[0])
    except OSError:
        pass
    return {a for a in found if not a.startswith("fe80")}


def _interface_addresses() -> set[str]:
    """Every interface's IPv4 address (SIOCGIFADDR) and IPv6 addresses (/proc/net/if_inet6), on Linux;
    nothing elsewhere (the host name and the route probe cover the usual LAN address there)."""
    found: set[str] = set()
    try:
        import fcntl
        import struct

        for _, name in socket.if_nameindex():
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                try:
                    packed = fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))
                    found.add(socket.inet_ntoa(packed[20:24]))
                except OSError:
                    continue  # an interface without an IPv4 address
    except (ImportError, OSError, AttributeError):
        pass
    try:
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            found.add(str(ipaddress.IPv6Address(int(line.split()[0], 16))))
    except (OSError, ValueError, IndexError):
        pass
    return found


# Named, not left 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets whose protocol says TCP, and
# the connections a listener accepts take its protocol. With it on, a response's body waited for the client's
# delayed acknowledgement of its head: ~40 ms on every request over a kept-alive connection (every click in the page).
TCP = socket.IPPROTO_TCP


def bind_lan(host: str, port: int = 0) -> socket.socket:
    """A listening socket for the phone mirror on `host` (an address of this machine, or 0.0.0.0)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM, TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(64)
    return listener


def bind_local(port: int = 0) -> tuple[socket.socket, str, str]:
    """A listening socket on 127.0.0.1, this launch's token and the URL to open. Connections wait in
    the backlog until a server runs on it, so a window may start loading the URL at once."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    token = secrets.token_urlsafe(32)
    return listener, token, f"http://127.0.0.1:{listener.getsockname()[1]}/?token={token}"

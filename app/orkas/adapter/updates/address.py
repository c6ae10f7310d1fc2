"""Where updates may come from and who must have signed them: the project's feed by default, https anywhere, or plain
http to this machine; the project's release key.

Its own small module: the settings and the configuration name these each time they are read, which must not load the
feed's parsing (nor its time) on every start."""

from __future__ import annotations

# The project's release key (Ed25519, raw, base64). ORKAS_UPDATE_KEY replaces it (a private build's own).
RELEASE_KEYS: tuple[str, ...] = ("HTzUjmsFLTP9wnxrJErt1UqJkOK3Azm4A1bm+4iFzgk=",)
# The project's releases. A release publishes feed.json beside its files (build/feed.py).
DEFAULT_FEED = "https://github.com/orkas-desktop/orkas/releases/latest/download/feed.json"


def allowed_url(url: str) -> bool:
    """https anywhere, or http to this machine (a local mirror, the tests): the signature guards what a feed
    says, TLS keeps who is checking for updates from everyone on the way."""
    if not isinstance(url, str) or url != url.strip() or any(c.isspace() or ord(c) < 32 for c in url):
        return False
    from urllib.parse import urlsplit  # here: the default address is never parsed at start

    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return True
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")

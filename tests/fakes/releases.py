"""A release host on 127.0.0.1 for the updater: a signed feed and its files, served by a real HTTP server that
records every request and can cut a download short.

`portable(folder, version, …)` makes a tar.gz shaped like build/build.py's (one `orkas-VERSION/` folder with an
`orkas` program) whose program answers `orkas update probe` as a real build does."""

from __future__ import annotations

import base64
import hashlib
import io
import shutil
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from orkas.adapter.updates.feed import sign


@dataclass(frozen=True)
class KeyPair:
    private: str  # base64 raw, as build/feed.py reads ORKAS_FEED_SIGNING_KEY
    public: str


def new_key() -> KeyPair:
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return KeyPair(base64.b64encode(private).decode(), base64.b64encode(public).decode())


def probe_script(version: str, data_format: int, *, starts: bool = True, marker: str = "") -> str:
    """An `orkas` that answers the probe the way build/'s bundle does, and says its version otherwise."""
    answer = f'{{"version": "{version}", "data_format": {data_format}}}'
    fail = "" if starts else 'echo "error while loading shared libraries: libfoo.so" >&2; exit 127\n'
    return (
        "#!/bin/sh\n" + fail + f'if [ "$1 $2" = "update probe" ]; then echo \'{answer}\'; exit 0; fi\n'
        f'echo "orkas {version} {marker}"\n'
    )


def portable(version: str, data_format: int, *, starts: bool = True, marker: str = "new") -> bytes:
    """A portable build's tar.gz: orkas-VERSION/orkas and orkas-VERSION/MARKER."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, text, mode in (
            ("orkas", probe_script(version, data_format, starts=starts, marker=marker), 0o755),
            ("MARKER", marker + "\n", 0o644),
            ("_internal/base_library.zip", "x" * 4096, 0o644),
        ):
            data = text.encode()
            info = tarfile.TarInfo(f"orkas-{version}/{name}")
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def artifact(url: str, data: bytes | Path, *, platform: str, kind: str = "tar.gz") -> dict[str, Any]:
    """The feed's entry for `data` (bytes, or a file read in chunks: a real build is hundreds of megabytes)."""
    digest, size = hashlib.sha256(), 0
    if isinstance(data, bytes):
        digest.update(data)
        size = len(data)
    else:
        with data.open("rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
    return {"platform": platform, "kind": kind, "url": url, "size": size, "sha256": digest.hexdigest()}


def payload(releases: list[dict[str, Any]], published: datetime | None = None) -> dict[str, Any]:
    when = published or datetime.now(UTC) - timedelta(minutes=5)
    return {"schema": 1, "published": when.isoformat(), "releases": releases}


@dataclass
class ReleaseHost:
    url: str
    files: dict[str, bytes | Path] = field(default_factory=dict)  # path -> body (or a file to stream)
    cut: dict[str, int] = field(default_factory=dict)  # path -> bytes sent before the connection is closed
    hold: dict[str, threading.Event] = field(default_factory=dict)  # path -> sends half, then waits for the event
    requests: list[dict[str, Any]] = field(default_factory=list)  # path, headers

    def publish(self, key: KeyPair, releases: list[dict[str, Any]], published: datetime | None = None) -> str:
        self.files["/feed.json"] = sign(payload(releases, published), key.private)
        return self.url + "/feed.json"

    def put(self, path: str, data: bytes | Path) -> str:
        self.files[path] = data
        return self.url + path


@contextmanager
def release_host() -> Iterator[ReleaseHost]:
    host = ReleaseHost("")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            host.requests.append({"path": self.path, "headers": dict(self.headers.items())})
            body = host.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            if isinstance(body, Path):
                self.send_header("Content-Length", str(body.stat().st_size))
                self.end_headers()
                with body.open("rb") as file:
                    shutil.copyfileobj(file, self.wfile, 1 << 20)
                return
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            sent = host.cut.get(self.path, len(body))
            if self.path in host.hold:
                self.wfile.write(body[: sent // 2])
                self.wfile.flush()
                host.hold[self.path].wait(30)
                body = body[sent // 2 :]
                sent -= sent // 2
            self.wfile.write(body[:sent])
            if sent < len(body):
                self.wfile.flush()
                self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    host.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield host
    finally:
        server.shutdown()
        server.server_close()

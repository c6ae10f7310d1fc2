"""A scripted HTTP/1.1 server on 127.0.0.1 for wire-level provider tests.

Real sockets, real chunked transfer, real SSE. Each test scripts the replies it expects, in order;
the server records every request and fails the test (at `verify()`) on an unexpected request, on
replies left unconsumed, or on a scripted callable or responder that raised. Faults: any status with
any headers, a connection reset after N events, a stall after the headers, an SSE error event after a
200. A test that answers by what a request carries rather than by its order sets `responder` (see there).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeAlias


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    events: Sequence[bytes] = ()  # SSE frames, sent chunk by chunk
    body: bytes | None = None  # a plain (non-streaming) body instead of events
    reset_after: int | None = None  # abort the TCP connection after this many events
    stall: float = 0.0  # seconds of silence after the headers (before any event)
    event_delay: float = 0.0  # seconds between events
    # Hold the stream after `hold_after` events until `release` is set: a test that must see a run
    # mid-stream waits for what it checks, then lets the reply go on, with no race against the clock.
    release: threading.Event | None = None
    hold_after: int = 1


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


Responder: TypeAlias = Callable[[Recorded], Reply]
"""Answers one request with a reply: see `FakeServer.responder`."""


def json_reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status=status,
        headers={"content-type": "application/json", **(headers or {})},
        body=json.dumps(payload).encode(),
    )


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up mid-stream is what fault tests do on purpose


class FakeServer:
    """Replies are consumed in order by requests whose path ends with `path`."""

    def __init__(self, path: str, responder: Responder | None = None) -> None:
        """`responder`: the same as setting `responder` after construction."""
        self.path = path
        self._lock = threading.RLock()  # re-entrant: a responder may call script() or read requests
        self._responder = responder
        self.requests: list[Recorded] = []
        self.violations: list[str] = []
        self._replies: list[Reply | Responder] = []
        self._stopping = threading.Event()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name="fake-server", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    @property
    def responder(self) -> Responder | None:
        """The fallback that answers a request when no scripted reply is left (None: such a request is
        a violation that fails `verify()`, and gets a 500).

        The contract: it is called once per request whose path ends with `path`, after every reply
        given to `script()` has been used (scripted replies always go first), with the request already
        appended to `requests`. Calls are made one at a time, in the order the requests arrived, on the
        server's own request threads, with the server's lock held: it may keep state of its own, read
        `requests` and call `script()`, but must return promptly (a slow answer is a `Reply` with `stall`
        or `event_delay`, which are served outside the lock). It returns the `Reply` to send; an
        exception it raises is recorded as a violation (so `verify()` fails the test) and answered
        with a 500. Set it to None to go back to scripted replies only."""
        return self._responder

    @responder.setter
    def responder(self, responder: Responder | None) -> None:
        with self._lock:
            self._responder = responder

    def script(self, *replies: Reply | Responder) -> None:
        """Queue replies for the next requests, in order. A callable is called with its request (outside
        the lock, on the request's thread) and returns the reply; an exception it raises is a violation."""
        with self._lock:
            self._replies.extend(replies)

    def reset(self) -> None:
        """Forget the script, the responder, the recorded requests and the violations: a fresh fake on the
        same address, for a server shared by several tests (each test's own `verify()` then judges only
        what happened since)."""
        with self._lock:
            self._replies.clear()
            self._responder = None
            self.requests.clear()
            self.violations.clear()

    @property
    def remaining(self) -> int:
        return len(self._replies)

    def verify(self) -> None:
        problems = list(self.violations)
        if self._replies:
            problems.append(f"{len(self._replies)} scripted replies were never requested")
        if problems:
            raise AssertionError("fake server: " + "; ".join(problems))

    def _next(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            if not request.path.split("?")[0].endswith(self.path):
                self.violations.append(f"unexpected path {request.method} {request.path}")
                return json_reply(404, {"error": {"type": "not_found_error", "message": "no such path"}})
            if not self._replies and self._responder is not None:
                return self._answer(self._responder, request)
            if not self._replies:
                self.violations.append(f"unexpected extra request #{len(self.requests)}")
                return json_reply(500, {"error": {"type": "api_error", "message": "fake server: nothing scripted"}})
            reply = self._replies.pop(0)
        return self._answer(reply, request) if callable(reply) else reply

    def _answer(self, respond: Responder, request: Recorded) -> Reply:
        try:
            return respond(request)
        except Exception as e:  # an assertion in a test's callable: fail the test at verify(), not silently
            with self._lock:
                self.violations.append(f"answering {request.method} {request.path} raised {type(e).__name__}: {e}")
            return json_reply(500, {"error": {"type": "api_error", "message": "fake server: the answer raised"}})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # or each small SSE write waits on a delayed ACK (~40 ms)

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = fake._next(Recorded(self.command, self.path, headers, body))
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.body is not None:
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                self.wfile.flush()
                if reply.stall and fake._stopping.wait(reply.stall):
                    return
                for index, event in enumerate(reply.events):
                    if reply.reset_after is not None and index >= reply.reset_after:
                        self._reset()
                        return
                    if reply.release is not None and index == reply.hold_after and not self._held(reply.release):
                        return
                    if reply.event_delay:
                        time.sleep(reply.event_delay)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                    self.wfile.flush()
                if reply.reset_after is not None:
                    self._reset()
                    return
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _held(self, release: threading.Event) -> bool:
                """Wait for the test's release; False when the fake stops first."""
                while not release.wait(0.05):
                    if fake._stopping.is_set():
                        return False
                return True

            def _reset(self) -> None:
                # SO_LINGER with a zero timeout makes close() send RST: a connection reset, not a clean end.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()

        return Handler


def sse(event: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()

"""What each connector's last contact showed, kept across restarts in `<data>/connector-health.json`.

    connected     a session is open and its last request succeeded
    connecting    a session is being opened
    degraded      it worked, then a request failed or its process died: backing off
    error         it could not be reached at all (would not start, refused the handshake): backing off
    disconnected  no session is held (never used, disabled, or the process holding it is gone)
    signin        it wants the person to sign in (first time, or the sign-in expired or was revoked): no retry
                  helps until they do

A failure backs off 30 s, then 60 s … up to 30 min; the deadline is written down, so a restart does not
hammer a server that was failing a minute ago. "connected" is only believed while the process that saw it
is alive: a reader finding it written by a process that has exited shows "disconnected".
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from orkas.core.fsutil import atomic_write

Status = Literal["connected", "connecting", "degraded", "error", "disconnected", "signin"]
BACKOFF_BASE = 30.0
BACKOFF_MAX = 30 * 60.0
ERROR_CHARS = 500


@dataclass(slots=True)
class Health:
    status: Status = "disconnected"
    tools: int | None = None
    last_error: str | None = None
    failures: int = 0
    retry_at: float = 0.0  # wall-clock seconds: no attempt before this
    checked_at: float = 0.0
    holder: int = 0  # the pid that holds the session (meaningful for connected / connecting)

    def waiting(self, now: float) -> float:
        """Seconds left before the next attempt (0: may try now)."""
        return max(0.0, self.retry_at - now) if self.failures else 0.0


def backoff(failures: int, base: float = BACKOFF_BASE) -> float:
    return float(min(base * 2 ** max(failures - 1, 0), max(BACKOFF_MAX, base)))


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class HealthFile:
    def __init__(self, path: Path, *, base: float = BACKOFF_BASE, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.base = base
        self.clock = clock

    def load(self) -> dict[str, Health]:
        try:
            raw = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        found: dict[str, Health] = {}
        for ident, item in (raw.get("servers") or {}).items() if isinstance(raw, dict) else ():
            if not isinstance(item, dict):
                continue
            health = Health(**{k: v for k, v in item.items() if k in Health.__dataclass_fields__})
            if health.status in ("connected", "connecting") and health.holder != os.getpid():
                if not _alive(health.holder):
                    health.status = "disconnected"
            found[ident] = health
        return found

    def get(self, ident: str) -> Health:
        return self.load().get(ident) or Health()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            try:
                import fcntl
            except ImportError:  # Windows: the last writer wins; each write is still whole (atomic_write)
                yield
                return
            fcntl.flock(lock, fcntl.LOCK_EX)  # the app and a CLI probe may both write
            yield

    def _update(self, ident: str, change: Callable[[Health], None]) -> Health:
        with self._locked():
            servers = self.load()
            health = servers.setdefault(ident, Health())
            change(health)
            health.checked_at = self.clock()
            self._write(servers)
            return health

    def _write(self, servers: dict[str, Health]) -> None:
        data = {"version": 1, "servers": {k: asdict(v) for k, v in servers.items()}}
        atomic_write(self.path, (json.dumps(data, indent=1) + "\n").encode())

    def connecting(self, ident: str) -> Health:
        def change(h: Health) -> None:
            h.status, h.holder = "connecting", os.getpid()

        return self._update(ident, change)

    def succeeded(self, ident: str, tools: int | None = None) -> Health:
        def change(h: Health) -> None:
            h.status, h.failures, h.retry_at, h.last_error, h.holder = "connected", 0, 0.0, None, os.getpid()
            if tools is not None:
                h.tools = tools

        return self._update(ident, change)

    def failed(self, ident: str, error: str, *, reached: bool) -> Health:
        """`reached`: it had been working (degraded) rather than never answering (error)."""

        def change(h: Health) -> None:
            h.failures += 1
            h.status = "degraded" if reached else "error"
            h.last_error = error[:ERROR_CHARS]
            h.retry_at = self.clock() + backoff(h.failures, self.base)
            h.holder = 0

        return self._update(ident, change)

    def needs_signin(self, ident: str, error: str) -> Health:
        """Nothing failed that a retry mends: the person signs in (then `succeeded` clears it)."""

        def change(h: Health) -> None:
            h.status, h.last_error, h.failures, h.retry_at, h.holder = "signin", error[:ERROR_CHARS], 0, 0.0, 0

        return self._update(ident, change)

    def released(self, ident: str) -> Health:
        """The session was closed on purpose (shut down, disabled): nothing failed."""

        def change(h: Health) -> None:
            if h.status in ("connected", "connecting"):
                h.status = "disconnected"
            h.holder = 0

        return self._update(ident, change)

    def reset(self, ident: str) -> Health:
        """The person asked to retry now (or re-enabled it): forget the back-off."""

        def change(h: Health) -> None:
            h.failures, h.retry_at = 0, 0.0
            if h.status in ("degraded", "error"):
                h.status = "disconnected"

        return self._update(ident, change)

    def forget(self, ident: str) -> None:
        with self._locked():
            servers = self.load()
            if servers.pop(ident, None) is not None:
                self._write(servers)

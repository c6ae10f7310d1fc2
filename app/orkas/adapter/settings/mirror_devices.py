"""Phones paired with this computer, and the pairing codes that pair them.

A pairing code is made on the desktop, lives two minutes and works once. Posting it (with a device name)
gives the phone a device token: only its SHA-256 is kept, in `<data>/mirror/devices.json`, so the file
alone lets nobody in. Wrong codes are counted per source address and minute: after five, that address's
attempts are refused for a minute without being checked (even with the right code: a guesser must not learn
when it found it). Another address is never refused for them — someone on the network guessing cannot keep
the person's phone from pairing with the code on the screen, which stays valid until used or expired (eight
characters of 31: guessing it in its two minutes is hopeless). Revoking a device refuses its token at once;
listeners hear it (the mirror closes that device's open sockets).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
import unicodedata
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from orkas.core.errors import ConfigError, NotFound
from orkas.core.fsutil import atomic_write
from orkas.core.redact import remember_secret

log = logging.getLogger(__name__)


def shown_name(name: str) -> str:
    """A device's name as the desktop lists it (and logs it): one line, no control characters and no marks that turn
    the text's direction — a right-to-left override could make "evil" read as another phone's name."""
    kept = "".join(
        " " if c in "\t\n\r" else c for c in name if unicodedata.category(c) not in ("Cc", "Cf") or c in "\t\n\r"
    )
    return " ".join(kept.split())[:60] or "Phone"


CODE_SECONDS = 120.0
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read off a screen and typed
CODE_LENGTH = 8
FAILURES_ALLOWED = 5  # wrong codes per minute before pairing is refused for a minute
LOCKOUT_SECONDS = 60.0
SEEN_EVERY = 60.0  # last_seen is written at most this often per device


class PairingRefused(ConfigError):
    """A code that is wrong, expired or used."""


class TooManyAttempts(ConfigError):
    """Pairing is locked for a while after repeated wrong codes."""


@dataclass(frozen=True, slots=True)
class Pairing:
    code: str
    expires_at: float


@dataclass(slots=True)
class Device:
    id: str
    name: str
    token_hash: str
    created: float
    last_seen: float

    def view(self) -> dict[str, object]:
        """What the desktop lists: never the token's hash."""
        return {"id": self.id, "name": self.name, "created": self.created, "last_seen": self.last_seen}


class MirrorDevices:
    def __init__(self, folder: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = folder / "devices.json"
        self.clock = clock
        self._lock = threading.Lock()
        self._codes: dict[str, float] = {}  # code → expiry
        self._failures: dict[str, list[float]] = {}  # source address → its wrong codes in the last minute
        self._locked_until: dict[str, float] = {}  # source address → when it may try again
        self._devices = self._load()
        self.on_revoke: list[Callable[[str], None]] = []
        self._read: dict[tuple[str, str], int] = {}  # (device, conversation) → finished turns seen

    # ---- pairing ----
    def start_pairing(self) -> Pairing:
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        remember_secret(code)  # never in a log line or a report
        now = self.clock()
        with self._lock:
            self._codes = {c: t for c, t in self._codes.items() if t > now}
            self._codes[code] = now + CODE_SECONDS
        return Pairing(code, now + CODE_SECONDS)

    def pair(self, code: str, name: str, source: str = "") -> tuple[Device, str]:
        """A new device and its token (shown once). `source` is the address the attempt came from. Raises
        TooManyAttempts (that address guessed wrong too often) or PairingRefused."""
        now = self.clock()
        with self._lock:
            if now < self._locked_until.get(source, 0.0):
                raise TooManyAttempts("too many wrong codes from this device: try again in a minute")
            wanted = code.strip().upper().replace("-", "").replace(" ", "")
            expiry = next((t for c, t in self._codes.items() if hmac.compare_digest(c, wanted)), None)
            if expiry is None or expiry <= now:
                self._count_failure(source, now)
                log.warning("mirror: a pairing attempt with a wrong or expired code was refused")
                raise PairingRefused("this code is wrong, expired or already used: ask the computer for a new one")
            del self._codes[wanted]  # once
            token = secrets.token_urlsafe(32)
            remember_secret(token)
            device = Device(uuid.uuid4().hex, shown_name(name), _hash(token), now, now)
            self._devices[device.id] = device
            self._save()
        log.info("mirror: paired device %s (%s)", device.id, device.name)
        return device, token

    def _count_failure(self, source: str, now: float) -> None:
        recent = [t for t in self._failures.get(source, []) if t > now - 60] + [now]
        if len(recent) >= FAILURES_ALLOWED:
            self._locked_until[source] = now + LOCKOUT_SECONDS
            recent = []
        self._failures[source] = recent
        if len(self._failures) > 4096:  # many addresses (a scan): forget those with nothing recent
            self._failures = {a: ts for a, ts in self._failures.items() if ts and ts[-1] > now - 60}
            self._locked_until = {a: t for a, t in self._locked_until.items() if t > now}

    # ---- devices ----
    def authenticate(self, token: str) -> Device | None:
        if not token:
            return None
        digest = _hash(token)
        with self._lock:
            found = next((d for d in self._devices.values() if hmac.compare_digest(d.token_hash, digest)), None)
            if found is not None and self.clock() - found.last_seen > SEEN_EVERY:
                found.last_seen = self.clock()
                self._save()
        return found

    # ---- unread: finished turns a device has not opened yet (kept while the app runs) ----
    def unread(self, device_id: str, conversation_id: str, finished: int) -> int:
        """Turns ended since this phone last opened the chat. A chat it never opened counts from when it first
        listed it (pairing, or this app's start): what ended before is not news to this phone, and a count of every
        turn the kept events hold ("85 new" on a chat of 200 answers) meant nothing to a person."""
        return max(0, finished - self._read.setdefault((device_id, conversation_id), finished))

    def mark_read(self, device_id: str, conversation_id: str, finished: int) -> None:
        self._read[(device_id, conversation_id)] = finished

    def devices(self) -> list[Device]:
        with self._lock:
            return sorted(self._devices.values(), key=lambda d: d.created)

    def revoke(self, device_id: str) -> None:
        with self._lock:
            if self._devices.pop(device_id, None) is None:
                raise NotFound(f"no paired device {device_id!r}")
            self._save()
        log.info("mirror: revoked device %s", device_id)
        for listener in list(self.on_revoke):
            listener(device_id)

    def _load(self) -> dict[str, Device]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return {d["id"]: Device(**d) for d in raw.get("devices", [])}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, KeyError) as e:
            raise ConfigError(f"{self.path} cannot be read ({type(e).__name__}): remove it to pair again") from e

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"devices": [asdict(d) for d in self._devices.values()]}
        atomic_write(self.path, json.dumps(data).encode())


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()

"""The credential vault: every secret Orkas keeps, encrypted with AES-256-GCM in `<data>/vault.bin`.

The master key lives in the OS keyring (macOS Keychain, Windows Credential Manager, Secret
Service). Where no real keyring exists — a headless Linux box — it is a random key in a 0600 file
beside the vault. `keyrings.alt` backends, which store secrets in plain text, are never used.
`key_source` says which one is in force, for settings.

Secrets never leave through names, errors or logs: errors name the vault file, never a value, and
the UI only ever sees `mask(secret)`.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import secrets
from pathlib import Path
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from orkas.core.errors import OrkasError
from orkas.core.fsutil import atomic_write

log = logging.getLogger(__name__)

SERVICE = "orkas"
KEY_NAME = "vault-master-key"
AAD = b"orkas-vault-v1"


class VaultError(OrkasError):
    """The vault cannot be read or written; the message names the file and the cause, never a secret."""


class KeySource(Protocol):
    @property
    def description(self) -> str: ...

    def key(self, *, create: bool) -> bytes | None: ...


class KeyringKey:
    """The master key in the OS keyring."""

    def __init__(self, backend: object) -> None:
        self.backend = backend

    @property
    def description(self) -> str:
        return f"OS keyring ({type(self.backend).__module__}.{type(self.backend).__name__})"

    def key(self, *, create: bool) -> bytes | None:
        stored = self.backend.get_password(SERVICE, KEY_NAME)  # type: ignore[attr-defined]
        if stored:
            return base64.b64decode(stored)
        if not create:
            return None
        fresh = AESGCM.generate_key(bit_length=256)
        self.backend.set_password(SERVICE, KEY_NAME, base64.b64encode(fresh).decode())  # type: ignore[attr-defined]
        return fresh


class FileKey:
    """A random master key in a 0600 file: the fallback where no keyring exists."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def description(self) -> str:
        return f"key file {self.path} (no OS keyring on this machine)"

    def key(self, *, create: bool) -> bytes | None:
        if self.path.exists():
            data = self.path.read_bytes()
            if len(data) != 32:
                raise VaultError(f"the vault key file {self.path} is damaged ({len(data)} bytes, expected 32)")
            return data
        if not create:
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = secrets.token_bytes(32)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, fresh)
            os.fsync(fd)
        finally:
            os.close(fd)
        return fresh


def choose_key_source(data_dir: Path, backend: object | None = None) -> KeySource:
    """The OS keyring when a real one is available, else a key file. Never a plaintext keyring."""
    if backend is None:
        try:
            import keyring

            backend = keyring.get_keyring()
        except Exception:  # a broken keyring installation must not take the app down
            backend = None
    module = type(backend).__module__ if backend is not None else ""
    usable = backend is not None and not module.startswith(("keyring.backends.fail", "keyrings.alt"))
    if usable and "chainer" in module:
        usable = bool(getattr(backend, "backends", []))
    return KeyringKey(backend) if usable else FileKey(data_dir / "vault.key")


def mask(secret: str) -> str:
    """What the UI may show of a secret."""
    if len(secret) <= 8:
        return "•" * len(secret)
    return f"{secret[:3]}…{secret[-4:]}"


class Vault:
    def __init__(self, path: Path, key_source: KeySource) -> None:
        self.path = path
        self.key_source = key_source

    def names(self) -> list[str]:
        return sorted(self._load())

    def get(self, name: str) -> str | None:
        return self._load().get(name)

    def set(self, name: str, secret: str) -> None:
        if not name or not secret:
            raise VaultError("a secret needs a name and a value")
        data = self._load()
        data[name] = secret
        self._save(data)

    def delete(self, name: str) -> bool:
        data = self._load()
        if name not in data:
            return False
        del data[name]
        self._save(data)
        return True

    def _load(self) -> dict[str, str]:
        if not self.path.exists():
            return {}
        key = self.key_source.key(create=False)
        if key is None:
            raise VaultError(f"the vault {self.path} exists but its key is missing ({self.key_source.description})")
        try:
            envelope = json.loads(self.path.read_bytes())
            nonce = base64.b64decode(envelope["nonce"])
            plain = AESGCM(key).decrypt(nonce, base64.b64decode(envelope["ciphertext"]), AAD)
            data = json.loads(plain)
        except InvalidTag:
            raise VaultError(f"the vault {self.path} cannot be decrypted: wrong key or damaged file") from None
        except (ValueError, KeyError, TypeError) as e:
            raise VaultError(f"the vault {self.path} is damaged ({type(e).__name__})") from None
        if not isinstance(data, dict):
            raise VaultError(f"the vault {self.path} is damaged (not a table of secrets)")
        return {str(k): str(v) for k, v in data.items()}

    def _save(self, data: dict[str, str]) -> None:
        key = self.key_source.key(create=True)
        assert key is not None
        nonce = secrets.token_bytes(12)
        ciphertext = AESGCM(key).encrypt(nonce, json.dumps(data).encode(), AAD)
        envelope = {
            "v": 1,
            "nonce": base64.b64encode(nonce).decode(),
            "ciphertext": base64.b64encode(ciphertext).decode(),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps(envelope).encode(), mode=0o600)
        log.info("vault saved: %d secrets", len(data))

"""The credential vault: every secret Orkas keeps, encrypted with AES-256-GCM in `<data>/vault.bin`.

The master key lives in the OS keyring (macOS Keychain, Windows Credential Manager, Secret
Service). Where no real keyring exists — a headless Linux box — it is a random key in a 0600 file
beside the vault: then anyone who can read the account's files can read the keys, and settings say
so. The person can protect that file with a passphrase (`FileKey.protect`): the master key is then
stored wrapped with AES-GCM under a key derived by scrypt, and must be unlocked once per launch
(Settings, `ORKAS_VAULT_PASSPHRASE`, or a prompt in a terminal). `keyrings.alt` backends, which store
secrets in plain text, are never used. `key_source` says which one is in force, for settings.

Secrets never leave through names, errors or logs: errors name the vault file, never a value, and
the UI only ever sees `mask(secret)`.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from orkas.core.errors import OrkasError
from orkas.core.fsutil import atomic_write
from orkas.core.redact import remember_secret

log = logging.getLogger(__name__)

SERVICE = "orkas"
KEY_NAME = "vault-master-key"
AAD = b"orkas-vault-v1"
KEY_AAD = b"orkas-vault-key-v1"
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**17, 8, 1  # OWASP's scrypt floor: 128 MB and ~0.3 s per guess
MIN_PASSPHRASE = 8
KEY_BYTES = 32  # the master key, raw in the key file when no passphrase wraps it

# Master keys unlocked with a passphrase in this process, by key file: the vault is reopened for every
# run, the passphrase is asked for once.
_unlocked: dict[Path, bytes] = {}


class VaultError(OrkasError):
    """The vault cannot be read or written; the message names the file and the cause, never a secret."""


class VaultLocked(VaultError):
    """The key file is protected by a passphrase that has not been given in this launch."""


class KeySource(Protocol):
    @property
    def description(self) -> str: ...

    def key(self, *, create: bool) -> bytes | None: ...

    def state(self) -> dict[str, object]: ...


class KeyringKey:
    """The master key in the OS keyring."""

    def __init__(self, backend: object) -> None:
        self.backend = backend

    @property
    def description(self) -> str:
        return f"OS keyring ({type(self.backend).__module__}.{type(self.backend).__name__})"

    def key(self, *, create: bool) -> bytes | None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        stored = self.backend.get_password(SERVICE, KEY_NAME)  # type: ignore[attr-defined]
        if stored:
            return base64.b64decode(stored)
        if not create:
            return None
        fresh = AESGCM.generate_key(bit_length=256)
        self.backend.set_password(SERVICE, KEY_NAME, base64.b64encode(fresh).decode())  # type: ignore[attr-defined]
        return fresh

    def state(self) -> dict[str, object]:
        return {"kind": "keyring", "description": self.description, "protected": True, "locked": False}


class FileKey:
    """A random master key in a 0600 file: the fallback where no keyring exists. Raw (32 bytes), or
    wrapped under a passphrase (a small JSON envelope) once the person protects it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def description(self) -> str:
        if self.protected:
            return f"key file {self.path}, protected by your passphrase (no OS keyring on this machine)"
        return (
            f"key file {self.path} beside the vault, not protected: anyone who can read your account's files "
            "can read your keys (no OS keyring on this machine)"
        )

    @property
    def protected(self) -> bool:
        try:
            return _wrapped(self.path.read_bytes())
        except FileNotFoundError:
            return False

    @property
    def locked(self) -> bool:
        return self.protected and self.path.resolve() not in _unlocked

    def state(self) -> dict[str, object]:
        return {
            "kind": "file",
            "path": str(self.path),
            "description": self.description,
            "protected": self.protected,
            "locked": self.locked,
        }

    def key(self, *, create: bool) -> bytes | None:
        if self.path.exists():
            data = self.path.read_bytes()
            if _wrapped(data):
                unlocked = _unlocked.get(self.path.resolve())
                if unlocked is None:
                    raise VaultLocked(
                        f"the vault's key {self.path} is protected by a passphrase: unlock it in Settings, "
                        "or set ORKAS_VAULT_PASSPHRASE (a terminal asks for it)"
                    )
                return unlocked
            if len(data) != KEY_BYTES:
                raise VaultError(f"the vault key file {self.path} is damaged ({len(data)} bytes, expected {KEY_BYTES})")
            return data
        if not create:
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = secrets.token_bytes(KEY_BYTES)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, fresh)
            os.fsync(fd)
        finally:
            os.close(fd)
        return fresh

    def unlock(self, passphrase: str) -> None:
        """Unwrap the master key for this launch. Raises VaultError on a wrong passphrase or a damaged file;
        a key file that is not protected needs no unlocking."""
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        if not self.protected:
            return
        remember_secret(passphrase)  # whatever happens next, it never reaches a log
        try:
            envelope = json.loads(self.path.read_bytes())
            salt = base64.b64decode(envelope["salt"])
            kek = _derive(passphrase, salt, int(envelope["n"]), int(envelope["r"]), int(envelope["p"]))
            master = AESGCM(kek).decrypt(
                base64.b64decode(envelope["nonce"]), base64.b64decode(envelope["key"]), KEY_AAD
            )
        except InvalidTag:
            log.warning("vault unlock refused: wrong passphrase")
            raise VaultError("wrong passphrase for the vault's key") from None
        except (ValueError, KeyError, TypeError) as e:
            raise VaultError(f"the vault key file {self.path} is damaged ({type(e).__name__})") from None
        _unlocked[self.path.resolve()] = master

    def protect(self, passphrase: str) -> None:
        """Wrap the master key (creating one if there is none yet) under `passphrase`; also changes it.
        The key file is replaced atomically: a crash leaves the old file or the new one."""
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        if len(passphrase) < MIN_PASSPHRASE:
            raise VaultError(f"a passphrase needs at least {MIN_PASSPHRASE} characters")
        remember_secret(passphrase)
        master = self.key(create=True)
        assert master is not None
        salt, nonce = secrets.token_bytes(16), secrets.token_bytes(12)
        kek = _derive(passphrase, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
        envelope = {
            "v": 1,
            "kdf": "scrypt",
            "n": SCRYPT_N,
            "r": SCRYPT_R,
            "p": SCRYPT_P,
            "salt": base64.b64encode(salt).decode(),
            "nonce": base64.b64encode(nonce).decode(),
            "key": base64.b64encode(AESGCM(kek).encrypt(nonce, master, KEY_AAD)).decode(),
        }
        atomic_write(self.path, json.dumps(envelope).encode(), mode=0o600)
        _unlocked[self.path.resolve()] = master
        log.info("vault key protected with a passphrase")

    def unprotect(self) -> None:
        """Store the master key raw again (it must be unlocked first)."""
        master = self.key(create=False)
        if master is None or not self.protected:
            return
        atomic_write(self.path, master, mode=0o600)
        _unlocked.pop(self.path.resolve(), None)
        log.info("vault key passphrase removed")


def _wrapped(data: bytes) -> bool:
    """A passphrase-wrapped key (a JSON envelope), not the raw 32-byte key. The length decides first: a
    raw key is random bytes and begins with "{" once in 256 keys; taken for an envelope, that vault
    would read as locked forever."""
    return len(data) != KEY_BYTES and data.startswith(b"{")


def _derive(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

    if not (2**14 <= n <= 2**20 and 1 <= r <= 32 and 1 <= p <= 16):  # a doctored file must not make us hang
        raise ValueError("scrypt parameters out of range")
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase.encode("utf-8"))


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
    def __init__(self, path: Path, key_source: KeySource | Callable[[], KeySource]) -> None:
        """`key_source` may be a function that chooses one, called on first use: asking the OS for its keyring
        costs ~80 ms, which a run that never opens the vault (no stored keys, no connector secrets) need not pay."""
        self.path = path
        self._source = key_source

    @classmethod
    def at(cls, data_dir: Path) -> Vault:
        """The data folder's vault, its key source chosen when first needed."""
        return cls(data_dir / "vault.bin", lambda: choose_key_source(data_dir))

    @property
    def key_source(self) -> KeySource:
        if callable(self._source):
            self._source = self._source()
        return self._source

    def names(self) -> list[str]:
        return sorted(self._load())

    def get(self, name: str) -> str | None:
        return self._load().get(name)

    def set(self, name: str, secret: str) -> None:
        if not name or not secret:
            raise VaultError("a secret needs a name and a value")
        remember_secret(secret)
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
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

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
            log.warning("vault %s cannot be decrypted", self.path)
            raise VaultError(f"the vault {self.path} cannot be decrypted: wrong key or damaged file") from None
        except (ValueError, KeyError, TypeError) as e:
            log.warning("vault %s is damaged (%s)", self.path, type(e).__name__)
            raise VaultError(f"the vault {self.path} is damaged ({type(e).__name__})") from None
        if not isinstance(data, dict):
            raise VaultError(f"the vault {self.path} is damaged (not a table of secrets)")
        secrets_ = {str(k): str(v) for k, v in data.items()}
        for value in secrets_.values():  # known from now on: removed from any log line, whatever its shape
            remember_secret(value)
        return secrets_

    def _save(self, data: dict[str, str]) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

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

"""The credential vault: encryption, key sources, damage, and no plaintext anywhere."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from keyring.backend import KeyringBackend

from orkas.adapter.settings.vault import FileKey, KeyringKey, Vault, VaultError, VaultLocked, choose_key_source, mask

SECRET = "sk-ant-api03-THIS-IS-A-VERY-SECRET-KEY-0123456789"


class MemoryKeyring(KeyringBackend):
    priority = -1  # type: ignore[assignment]  # never chosen by keyring.get_keyring() for other tests

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.store.pop((service, username), None)


def test_round_trip_with_a_key_file(tmp_path: Path) -> None:
    from keyring.backends.fail import Keyring as FailKeyring

    vault = Vault(tmp_path / "vault.bin", choose_key_source(tmp_path, backend=FailKeyring()))
    assert isinstance(vault.key_source, FileKey) and "no OS keyring" in vault.key_source.description
    vault.set("anthropic#1", SECRET)
    vault.set("openai#1", "sk-other")
    assert vault.get("anthropic#1") == SECRET and vault.names() == ["anthropic#1", "openai#1"]
    assert vault.delete("openai#1") and not vault.delete("openai#1")
    assert stat.S_IMODE((tmp_path / "vault.key").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "vault.bin").stat().st_mode) == 0o600
    reopened = Vault(tmp_path / "vault.bin", FileKey(tmp_path / "vault.key"))
    assert reopened.get("anthropic#1") == SECRET


def test_the_os_keyring_holds_the_master_key_when_there_is_one(tmp_path: Path) -> None:
    backend = MemoryKeyring()
    source = choose_key_source(tmp_path, backend=backend)
    assert isinstance(source, KeyringKey) and "MemoryKeyring" in source.description
    Vault(tmp_path / "vault.bin", source).set("k", SECRET)
    assert ("orkas", "vault-master-key") in backend.store and not (tmp_path / "vault.key").exists()


def test_plaintext_and_failing_keyrings_are_never_used(tmp_path: Path) -> None:
    from keyring.backends.fail import Keyring as FailKeyring

    assert isinstance(choose_key_source(tmp_path, backend=FailKeyring()), FileKey)
    plaintext = type("PlaintextKeyring", (MemoryKeyring,), {"__module__": "keyrings.alt.file"})()
    assert isinstance(choose_key_source(tmp_path, backend=plaintext), FileKey)


def test_no_plaintext_secret_anywhere_in_the_data_dir(tmp_path: Path) -> None:
    vault = Vault(tmp_path / "vault.bin", FileKey(tmp_path / "vault.key"))
    for i in range(3):
        vault.set(f"provider#{i}", SECRET + str(i))
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_a_wrong_key_or_a_damaged_file_is_a_clear_error(tmp_path: Path) -> None:
    vault = Vault(tmp_path / "vault.bin", FileKey(tmp_path / "vault.key"))
    vault.set("k", SECRET)
    (tmp_path / "other.key").write_bytes(b"x" * 32)
    with pytest.raises(VaultError, match="wrong key or damaged") as info:
        Vault(tmp_path / "vault.bin", FileKey(tmp_path / "other.key")).get("k")
    assert SECRET not in str(info.value)
    (tmp_path / "vault.bin").write_text("{garbage")
    with pytest.raises(VaultError, match="damaged"):
        vault.names()
    (tmp_path / "vault.key").write_bytes(b"short")
    with pytest.raises(VaultError, match=r"key file .* is damaged"):
        vault.get("k")


def test_masking() -> None:
    assert mask(SECRET) == "sk-…6789" and SECRET not in mask(SECRET)
    assert mask("short") == "•••••"


# A passphrase for the key file (no OS keyring).


@pytest.fixture
def fresh_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new launch: nothing unlocked yet."""
    from orkas.adapter.settings import vault as vault_module

    monkeypatch.setattr(vault_module, "_unlocked", {})


def relaunch() -> None:
    from orkas.adapter.settings import vault as vault_module

    vault_module._unlocked.clear()


def test_a_protected_key_file_holds_no_usable_key_and_needs_the_passphrase(tmp_path: Path, fresh_launch: None) -> None:
    source = FileKey(tmp_path / "vault.key")
    vault = Vault(tmp_path / "vault.bin", source)
    vault.set("anthropic#1", SECRET)
    raw = (tmp_path / "vault.key").read_bytes()
    source.protect("correct horse battery")
    wrapped = (tmp_path / "vault.key").read_bytes()
    assert raw not in wrapped and wrapped.startswith(b"{") and b"scrypt" in wrapped
    assert stat.S_IMODE((tmp_path / "vault.key").stat().st_mode) == 0o600
    assert vault.get("anthropic#1") == SECRET and "protected by your passphrase" in source.description

    relaunch()
    assert source.locked and source.state()["locked"] is True
    with pytest.raises(VaultLocked, match="ORKAS_VAULT_PASSPHRASE"):
        vault.get("anthropic#1")
    with pytest.raises(VaultError, match="wrong passphrase"):
        source.unlock("correct horse battery!")
    with pytest.raises(VaultLocked):
        vault.set("openai#1", "sk-other")  # a locked vault is not silently replaced by a new key
    source.unlock("correct horse battery")
    assert vault.get("anthropic#1") == SECRET and not source.locked


def test_the_passphrase_is_changed_and_removed(tmp_path: Path, fresh_launch: None) -> None:
    source = FileKey(tmp_path / "vault.key")
    vault = Vault(tmp_path / "vault.bin", source)
    vault.set("k", SECRET)
    with pytest.raises(VaultError, match="at least 8"):
        source.protect("short")
    assert not source.protected  # nothing changed
    source.protect("first passphrase")
    source.protect("second passphrase")
    relaunch()
    with pytest.raises(VaultError, match="wrong passphrase"):
        source.unlock("first passphrase")
    source.unlock("second passphrase")
    source.unprotect()
    relaunch()
    assert not source.protected and not source.locked and vault.get("k") == SECRET
    assert "not protected" in source.description and "anyone who can read" in source.description


def test_a_doctored_key_file_cannot_make_unlocking_hang(tmp_path: Path, fresh_launch: None) -> None:
    source = FileKey(tmp_path / "vault.key")
    source.protect("a passphrase")
    envelope = json.loads((tmp_path / "vault.key").read_text())
    envelope["n"] = 2**40
    (tmp_path / "vault.key").write_text(json.dumps(envelope))
    relaunch()
    with pytest.raises(VaultError, match="damaged"):
        source.unlock("a passphrase")


def test_the_keyring_needs_no_passphrase(tmp_path: Path) -> None:
    source = choose_key_source(tmp_path, backend=MemoryKeyring())
    assert source.state() == {"kind": "keyring", "description": source.description, "protected": True, "locked": False}


def test_a_raw_key_that_happens_to_begin_with_a_brace_is_still_a_raw_key(tmp_path: Path, fresh_launch: None) -> None:
    # One key in 256 begins with "{": it must not be taken for a passphrase envelope (a locked vault).
    key_file = tmp_path / "vault.key"
    key_file.write_bytes(b"{" + bytes(range(31)))
    source = FileKey(key_file)
    assert not source.protected and not source.locked
    vault = Vault(tmp_path / "vault.bin", source)
    vault.set("anthropic#1", SECRET)
    assert Vault(tmp_path / "vault.bin", FileKey(key_file)).get("anthropic#1") == SECRET
    source.protect("correct horse battery")  # and it can still be wrapped
    assert FileKey(key_file).protected

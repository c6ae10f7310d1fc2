"""`orkas vault status | protect | unprotect`: where the vault's key is, and a passphrase for it.

With an OS keyring the keyring guards the key and there is nothing to do here. Without one the key is
a file beside the vault; `protect` wraps it under a passphrase (asked twice without echo, or read from
standard input, one line each, when it is not a terminal). Every other command then needs the
passphrase once per launch: `ORKAS_VAULT_PASSPHRASE`, or a prompt when standard input is a terminal.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Mapping
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
PASSPHRASE_ENV = "ORKAS_VAULT_PASSPHRASE"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    vault = commands.add_parser("vault", help="where the keys' master key is; protect it with a passphrase")
    actions = vault.add_subparsers(dest="vault_command")
    actions.add_parser("status", help="where the master key is kept and whether a passphrase protects it")
    actions.add_parser("protect", help="protect the key file with a passphrase (or change it)")
    actions.add_parser("unprotect", help="remove the passphrase (the key file is readable by your account again)")


def _ask(prompt: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    return sys.stdin.readline().rstrip("\n")


def unlock_if_protected(data_dir: Path, env: Mapping[str, str]) -> str | None:
    """Before any other command: unlock a passphrase-protected key file from the environment or a
    prompt. Returns an error to print, or None. Without a way to ask, the vault stays locked and the
    command goes on with environment keys only (it says so)."""
    key_file = data_dir / "vault.key"
    try:
        with key_file.open("rb") as f:
            if f.read(1) != b"{":
                return None
    except OSError:
        return None
    from orkas.adapter.settings.vault import FileKey, VaultError, choose_key_source

    source = choose_key_source(data_dir)
    if not isinstance(source, FileKey) or not source.locked:
        return None
    passphrase = env.get(PASSPHRASE_ENV)
    if passphrase is None and sys.stdin.isatty():
        passphrase = getpass.getpass("Passphrase for the Orkas vault: ")
    if passphrase is None:
        return None
    try:
        source.unlock(passphrase)
    except VaultError as e:
        return str(e)
    return None


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.adapter.settings.vault import FileKey, VaultError, choose_key_source
    from orkas.app import settings_from_env

    data_dir = settings_from_env(env).data_dir
    source = choose_key_source(data_dir)
    command = args.vault_command or "status"
    if command == "status":
        print(source.description)
        return EXIT_OK
    if not isinstance(source, FileKey):
        print("orkas: the OS keyring keeps the vault's key; there is no key file to protect", file=sys.stderr)
        return EXIT_USAGE
    try:
        if source.locked:
            source.unlock(env.get(PASSPHRASE_ENV) or _ask("Current passphrase: "))
        if command == "unprotect":
            source.unprotect()
            print(f"the passphrase is removed: {source.description}")
            return EXIT_OK
        passphrase = _ask("New passphrase: ")
        if _ask("The same passphrase again: ") != passphrase:
            print("orkas: the two passphrases differ; nothing changed", file=sys.stderr)
            return EXIT_USAGE
        source.protect(passphrase)
    except VaultError as e:
        print(f"orkas: {e}", file=sys.stderr)
        return EXIT_FAILED
    print(f"protected: {source.description}")
    return EXIT_OK

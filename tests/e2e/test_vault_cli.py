"""`orkas vault …` end to end, with no OS keyring (the machines tests run on have none): the key file
is said to be unprotected, a passphrase protects it, and every later command needs the passphrase —
from ORKAS_VAULT_PASSPHRASE, since standard input is not a terminal here — before a stored key is used."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tests.conftest import subprocess_env
from tests.e2e.test_providers_cli import orkas
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer

KEY = "sk-ant-VAULTED-very-secret-key-333333"
PASSPHRASE = "a long enough passphrase"


def test_a_passphrase_guards_the_key_file_and_a_run_unlocks_it(anthropic_server: FakeServer) -> None:
    env = subprocess_env()
    home = Path(env["ORKAS_HOME"])
    added = orkas(
        "providers", "add", "work", "--kind", "anthropic", "--base-url", anthropic_server.url,
        "--model", "claude-test", "--key", "-", env=env, stdin=KEY + "\n",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    status = orkas("vault", "status", env=env)
    assert "not protected" in status.stdout and str(home / "vault.key") in status.stdout

    differ = orkas("vault", "protect", env=env, stdin=f"{PASSPHRASE}\nsomething else\n")
    assert differ.returncode == 2 and "differ" in differ.stderr
    protected = orkas("vault", "protect", env=env, stdin=f"{PASSPHRASE}\n{PASSPHRASE}\n")
    assert protected.returncode == 0, protected.stderr
    key_file = home / "vault.key"
    assert key_file.read_bytes().startswith(b"{") and stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert KEY.encode() not in (home / "vault.bin").read_bytes()

    locked = orkas("status", env=env)
    assert locked.returncode == 0
    assert "protected by a passphrase" in locked.stdout and "ORKAS_VAULT_PASSPHRASE" in locked.stdout
    no_key = orkas("run", "hi", env=env)
    assert no_key.returncode != 0 and not anthropic_server.requests  # nothing was sent without the key

    wrong = orkas("status", env={**env, "ORKAS_VAULT_PASSPHRASE": "not it at all"})
    assert wrong.returncode == 2 and "wrong passphrase" in wrong.stderr

    unlocked_env = {**env, "ORKAS_VAULT_PASSPHRASE": PASSPHRASE}
    anthropic_server.script(a_wire.reply_text("answered with the vaulted key"))
    ran = orkas("run", "hi", "--json", env=unlocked_env)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout.splitlines()[-2])["text"] == "answered with the vaulted key"
    sent = anthropic_server.requests[-1].headers
    assert KEY in (sent.get("x-api-key", ""), sent.get("authorization", "").removeprefix("Bearer ")), sent
    assert PASSPHRASE not in ran.stdout + ran.stderr

    removed = orkas("vault", "unprotect", env=unlocked_env)
    assert removed.returncode == 0 and len(key_file.read_bytes()) == 32
    assert "not protected" in orkas("vault", "status", env=env).stdout

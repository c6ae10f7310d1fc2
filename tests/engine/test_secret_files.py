"""What counts as a secret value to cut from output, and how the scan of a workspace keeps up."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orkas.engine.sandbox.secret_files import SecretFiles, secret_values


def test_values_are_what_is_assigned_quoted_or_a_keys_body() -> None:
    text = (
        "# a comment = not-a-value-123\n"
        "export API_KEY=abcDEF123456\n"
        'DB_URL="postgres://app:hunter2pw@db:5432/app"\n'
        "NODE_ENV=production\nPORT=3000\nDEBUG=true\nHOME_DIR=/srv/app\nSITE=https://example.com/x\n"
        '{"client_secret": "GOCSPX-abc_123xyz"}\n'
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n"
    )
    assert secret_values(text) == [
        "abcDEF123456",
        "postgres://app:hunter2pw@db:5432/app",
        "GOCSPX-abc_123xyz",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ]


def test_the_scan_follows_changes_and_never_follows_links(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / ".env").write_text("K=outsideValue123\n")
    os.symlink(outside, ws / "linked")
    (ws / "node_modules" / "x").mkdir(parents=True)
    (ws / "node_modules" / "x" / ".env").write_text("K=vendoredValue123\n")
    scans = SecretFiles()
    vendored = ws / "node_modules" / "x" / ".env"  # a secret moved into a dependency folder is still one
    assert scans.find((ws,)).files == (vendored,)
    vendored.unlink()
    scans.touched((ws,))  # a command or a file tool wrote: dependency folders are looked at again
    assert scans.find((ws,)).files == ()
    (ws / "deep" / "er").mkdir(parents=True)
    (ws / "deep" / "er" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n")
    found = scans.find((ws,))
    assert found.files == (ws / "deep" / "er" / "id_ed25519",)
    assert found.redact("x b3BlbnNzaC1rZXktdjEAAAAA y") == "x [hidden: a value from id_ed25519] y"
    (ws / "deep" / "er" / "id_ed25519").unlink()
    assert scans.find((ws,)).files == ()


def test_a_folder_of_many_secrets_is_hidden_whole(tmp_path: Path) -> None:
    """Third red team: 3,000 planted .pem files made bubblewrap refuse every command (too many arguments)."""
    ws = tmp_path / "ws"
    (ws / ".a").mkdir(parents=True)
    for i in range(3000):
        (ws / ".a" / f"k{i}.pem").write_text("")
    (ws / "id_ed25519").write_text("PRIVKEY_SECRET_444\n")
    found = SecretFiles().find((ws,))
    assert found.folders == (ws / ".a",) and found.files == (ws / "id_ed25519",) and found.complete


def test_a_folder_put_back_with_its_old_times_is_still_seen_to_have_changed(tmp_path: Path) -> None:
    """Second red team, B3: `mv config conf2; mkdir config; touch -d <old> config .` kept a stale scan."""
    ws = tmp_path / "ws"
    (ws / "config").mkdir(parents=True)
    (ws / "config" / ".env.production").write_text("DB_PASS=CONF_SECRET_555x\n")
    scans = SecretFiles()
    assert scans.find((ws,)).files == (ws / "config" / ".env.production",)
    times = {p: (p.stat().st_atime_ns, p.stat().st_mtime_ns) for p in (ws, ws / "config")}
    (ws / "config").rename(ws / "conf2")
    (ws / "config").mkdir()
    for path, (atime, mtime) in times.items():
        os.utime(path, ns=(atime, mtime))
    assert scans.find((ws,)).files == (ws / "conf2" / ".env.production",)


def test_many_secret_files_are_all_hidden_and_another_name_anywhere_is_found(tmp_path: Path) -> None:
    """B1: 420 planted `.pem` files pushed the real key past the cap of 400; B7: a hard link to .env planted in
    node_modules (a folder the scan skips) was never hidden."""
    ws = tmp_path / "ws"
    (ws / ".a").mkdir(parents=True)
    for i in range(420):
        (ws / ".a" / f"k{i}.pem").write_text("")
    (ws / "id_ed25519").write_text("PRIVKEY_SECRET_444\n")
    (ws / ".env.local").write_text("API_KEY=LOCAL_SECRET_777x\n")
    (ws / "node_modules" / ".cache").mkdir(parents=True)
    os.link(ws / ".env.local", ws / "node_modules" / ".cache" / "pkg.txt")
    found = SecretFiles().find((ws,))
    assert {ws / "id_ed25519", ws / ".env.local", ws / "node_modules" / ".cache" / "pkg.txt"} <= set(found.files)
    assert found.complete and found.redact("x PRIVKEY_SECRET_444") == "x [hidden: a value from id_ed25519]"


def test_a_workspace_too_big_to_search_is_incomplete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """B2: past the budget the scan used what it had found; now it says it is incomplete (and bash asks)."""
    import orkas.engine.sandbox.secret_files as module

    ws = tmp_path / "ws"
    (ws / "b").mkdir(parents=True)
    for i in range(60):
        (ws / "b" / f"f{i}").write_text("")
    (ws / "secrets").mkdir()
    (ws / "secrets" / "db.yaml").write_text('password: "FOLDER_SECRET_666x"\n')
    monkeypatch.setattr(module, "BUDGET", 50)  # a million entries, made small
    assert not SecretFiles().find((ws,)).complete


def test_a_remotes_token_in_the_repositorys_config_is_cut(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text('[remote "origin"]\n\turl = https://ana:ghp_Tok3nValue99@github.com/a/b\n')
    found = SecretFiles().find((ws,))
    assert found.files == () and "ghp_Tok3nValue99" not in found.redact(
        "origin https://ana:ghp_Tok3nValue99@github.com"
    )

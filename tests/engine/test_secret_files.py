"""What counts as a secret value to cut from output, and how the scan of a workspace keeps up."""

from __future__ import annotations

import os
from pathlib import Path

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
    assert scans.find((ws,)).files == ()
    (ws / "deep" / "er").mkdir(parents=True)
    (ws / "deep" / "er" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n")
    found = scans.find((ws,))
    assert found.files == (ws / "deep" / "er" / "id_ed25519",)
    assert found.redact("x b3BlbnNzaC1rZXktdjEAAAAA y") == "x [hidden: a value from id_ed25519] y"
    (ws / "deep" / "er" / "id_ed25519").unlink()
    assert scans.find((ws,)).files == ()

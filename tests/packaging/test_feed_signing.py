"""build/feed.py, the release step that signs the feed: what it signs, the app verifies; without the key in
the environment it signs nothing; the key never has to be an argument or a file of the repository."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from orkas import __version__
from orkas.adapter.settings.data_format import CURRENT
from orkas.adapter.updates.feed import UpdateError, verify
from tests.conftest import subprocess_env
from tests.fakes.releases import new_key

ROOT = Path(__file__).resolve().parents[2]
FEED = [sys.executable, str(ROOT / "build" / "feed.py")]


def test_the_signed_feed_lists_each_build_and_verifies_with_the_public_key_only(tmp_path: Path) -> None:
    key = new_key()
    tar = tmp_path / f"orkas-{__version__}-linux-x86_64.tar.gz"
    deb = tmp_path / f"orkas_{__version__}_amd64.deb"
    tar.write_bytes(b"tar" * 1000)
    deb.write_bytes(b"deb" * 900)
    (tmp_path / "NOTES.md").write_text("Hooks, schedules, updates.")
    made = subprocess.run(
        [*FEED, "--base-url", "https://example.org/v1/", "--notes", str(tmp_path / "NOTES.md"), str(tar), str(deb)],
        capture_output=True, env=subprocess_env(ORKAS_FEED_SIGNING_KEY=key.private), check=True,
    )  # fmt: skip
    feed = verify(made.stdout, [key.public])
    [release] = feed.releases
    assert (release.version, release.data_format, release.notes) == (__version__, CURRENT, "Hooks, schedules, updates.")
    listed = {(a.platform, a.kind): a for a in release.artifacts}
    assert listed["linux-x86_64", "tar.gz"].sha256 == hashlib.sha256(tar.read_bytes()).hexdigest()
    assert listed["linux-x86_64", "deb"].size == 2700
    assert listed["linux-x86_64", "deb"].url == f"https://example.org/v1/orkas_{__version__}_amd64.deb"
    with pytest.raises(UpdateError, match="signature"):
        verify(made.stdout, [new_key().public])
    assert key.private.encode() not in made.stdout


def test_without_the_key_in_the_environment_nothing_is_signed(tmp_path: Path) -> None:
    (tmp_path / "orkas-1-linux-x86_64.tar.gz").write_bytes(b"x")
    env = subprocess_env()
    env.pop("ORKAS_FEED_SIGNING_KEY", None)
    made = subprocess.run([*FEED, "--base-url", "https://e.org", str(tmp_path / "orkas-1-linux-x86_64.tar.gz")],
                          capture_output=True, text=True, env=env)  # fmt: skip
    assert made.returncode == 2 and "ORKAS_FEED_SIGNING_KEY is not set" in made.stderr and made.stdout == ""
    pair = subprocess.run([*FEED, "--new-key"], capture_output=True, text=True, env=env, check=True).stdout
    assert "ORKAS_FEED_SIGNING_KEY=" in pair and "public key for RELEASE_KEYS: " in pair

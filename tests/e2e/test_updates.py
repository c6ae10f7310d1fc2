"""Updates as a person meets them, with default settings but the feed's address: `orkas serve` reads the signed
feed a moment after start and never again that day (a restart included), Settings' switch turns that off, and
`orkas update check|apply` say the same from a terminal. The release host is a real local HTTP server."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from orkas import __version__
from orkas.adapter.settings.data_format import CURRENT
from orkas.adapter.updates.install import Installation
from tests.conftest import subprocess_env
from tests.fakes.releases import KeyPair, ReleaseHost, artifact, new_key, portable, release_host
from tests.ui.conftest import ORKAS

PLATFORM = Installation("tar.gz", Path("/x/orkas")).platform
NEWER = "99.0.0"


@pytest.fixture
def host() -> Iterator[ReleaseHost]:
    with release_host() as serving:
        yield serving


@pytest.fixture
def key() -> KeyPair:
    return new_key()


def publish(host: ReleaseHost, key: KeyPair, version: str = NEWER) -> str:
    data = portable(version, CURRENT)
    url = host.put(f"/orkas-{version}.tar.gz", data)
    release = {"version": version, "notes": "Schedules and hooks.", "data_format": CURRENT,
               "artifacts": [artifact(url, data, platform=PLATFORM)]}  # fmt: skip
    return host.publish(key, [release])


def env(home: Path, key: KeyPair, **extra: str) -> dict[str, str]:
    environment = subprocess_env(ORKAS_HOME=str(home), ORKAS_UPDATE_KEY=key.public, **extra)
    environment.pop("ORKAS_UPDATES")  # the default: checking on
    return environment


def wait_for_log(home: Path, text: str, process: subprocess.Popen[str], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(text in log.read_text() for log in home.glob("logs/*.log")):
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never logged")


def serve(home: Path, key: KeyPair) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([ORKAS, "serve"], env=env(home, key, ORKAS_UPDATE_SETTLE="1"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.communicate(timeout=20)


def test_the_server_reads_the_feed_once_a_day_across_a_restart_and_not_when_switched_off(
    tmp_path: Path, host: ReleaseHost, key: KeyPair
) -> None:
    feed = publish(host, key)
    home = tmp_path / "data"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"preferences": {"update_feed": feed}}))
    process, url = serve(home, key)
    try:
        wait_for_log(home, "update check: 99.0.0 is available", process)
        base, token = url.split("/?", 1)[0], url.split("token=", 1)[1]
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as client:
            status = client.get("/api/updates").json()
            assert status["installed"] == __version__ and status["check"] is True and status["feed"] == feed
            assert status["available"]["version"] == NEWER and status["available"]["notes"] == "Schedules and hooks."
            assert status["kind"] == "source" and status["available"]["size"] is None  # a checkout: git, no download
    finally:
        stop(process)
    assert [r["path"] for r in host.requests] == ["/feed.json"]
    process, _ = serve(home, key)  # a restart the same day: not read again
    try:
        wait_for_log(home, "update check: next in 24.0 h", process)
    finally:
        stop(process)
    assert [r["path"] for r in host.requests] == ["/feed.json"]
    (home / "settings.json").write_text(json.dumps({"preferences": {"update_feed": feed, "update_check": False}}))
    (home / "updates" / "state.json").unlink()  # due again, but the person said no
    process, _ = serve(home, key)
    try:
        wait_for_log(home, "update check: off in Settings", process)
    finally:
        stop(process)
    assert [r["path"] for r in host.requests] == ["/feed.json"]


def test_update_check_and_apply_from_a_terminal(tmp_path: Path, host: ReleaseHost, key: KeyPair) -> None:
    feed = publish(host, key)
    home = tmp_path / "data"
    checked = subprocess.run([ORKAS, "update", "check", "--feed", feed], env=env(home, key),
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    assert f"Orkas {__version__} is installed; {NEWER} is available" in checked.stdout
    assert "Schedules and hooks." in checked.stdout
    applied = subprocess.run([ORKAS, "update", "apply", "--feed", feed], env=env(home, key),
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert applied.returncode == 1 and "source checkout: update it with git pull" in applied.stderr
    forged = subprocess.run([ORKAS, "update", "check", "--feed", feed], env=env(home, new_key()),
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert forged.returncode == 1 and "signature does not match" in forged.stderr
    plain = subprocess.run([ORKAS, "update", "check", "--feed", "http://example.org/feed.json"],
                           env=env(home, key), capture_output=True, text=True, timeout=60)  # fmt: skip
    assert plain.returncode == 1 and "not an https address" in plain.stderr
    probe = subprocess.run([ORKAS, "update", "probe"], env=env(tmp_path / "never", key), capture_output=True,
                           text=True, timeout=60, check=True)  # fmt: skip
    assert json.loads(probe.stdout) == {"version": __version__, "data_format": CURRENT}
    assert not (tmp_path / "never").exists()  # the probe opens no data folder

"""Updates against a real local release host: a signed feed, real downloads, a portable build's folder really
exchanged. The build here is shaped like build/build.py's (tests/fakes/releases.py); tests/packaging/test_deb.py
does the same with the real PyInstaller build."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from orkas.adapter.settings.data_format import CURRENT
from orkas.adapter.updates.address import allowed_url
from orkas.adapter.updates.feed import UpdateError, parse_version, verify
from orkas.adapter.updates.install import Installation, exchange, others_running, staging_folder
from orkas.adapter.updates.updater import DAY, Updater
from tests.fakes.releases import KeyPair, ReleaseHost, artifact, new_key, portable, probe_script, release_host

PLATFORM = Installation("tar.gz", Path("/x/orkas")).platform


@pytest.fixture
def key() -> KeyPair:
    return new_key()


@pytest.fixture
def host() -> Iterator[ReleaseHost]:
    with release_host() as serving:
        yield serving


@pytest.fixture
def installed(tmp_path: Path) -> Installation:
    """Orkas 0.2.0 unpacked in a folder of the person's, as the portable tar.gz is."""
    folder = tmp_path / "apps" / "orkas-0.2.0"
    folder.mkdir(parents=True)
    (folder / "orkas").write_text(probe_script("0.2.0", CURRENT, marker="old"))
    (folder / "orkas").chmod(0o755)
    (folder / "MARKER").write_text("old\n")
    return Installation("tar.gz", folder / "orkas", folder)


def offer(
    host: ReleaseHost, key: KeyPair, version: str = "0.3.0", *, data_format: int = CURRENT, build: bytes | None = None,
    published: datetime | None = None, notes: str = "Faster starts.",
) -> tuple[str, bytes]:  # fmt: skip
    data = build if build is not None else portable(version, data_format)
    url = host.put(f"/orkas-{version}-linux.tar.gz", data)
    release = {"version": version, "notes": notes, "data_format": data_format, "artifacts": [
        artifact(url, data, platform=PLATFORM)]}  # fmt: skip
    return host.publish(key, [release], published), data


def updater(tmp_path: Path, installed: Installation, feed: str, key: KeyPair, **kw: object) -> Updater:
    return Updater(tmp_path / "data" / "updates", feed_url=lambda: feed, keys=[key.public], installed=installed,
                   env=dict(os.environ), version="0.2.0", **kw)  # type: ignore[arg-type]  # fmt: skip


def untouched(installed: Installation) -> None:
    assert installed.folder is not None
    assert (installed.folder / "MARKER").read_text() == "old\n"
    assert not staging_folder(installed.folder).exists()
    assert [p.name for p in installed.folder.parent.iterdir()] == [installed.folder.name]


def test_a_good_update_is_checked_downloaded_started_once_and_exchanged_whole(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    feed, data = offer(host, key)
    up = updater(tmp_path, installed, feed, key)
    newer = up.check()
    assert newer is not None and newer.version == "0.3.0" and newer.notes == "Faster starts."
    status = up.status()
    assert status["available"]["size"] == len(data) and not status["migrates"] and status["installed"] == "0.2.0"
    seen: list[int] = []
    up.progress.listeners.append(lambda: seen.append(up.progress.done))
    prepared = up.prepare()
    assert prepared.version == "0.3.0" and prepared.staged is not None and not prepared.migrates
    assert max(seen) == len(data) and up.progress.busy is None
    assert (installed.folder / "MARKER").read_text() == "old\n"  # type: ignore[operator]  # nothing changed yet
    assert installed.folder is not None
    exchange(prepared.staged, installed.folder)
    assert (installed.folder / "MARKER").read_text() == "new\n"
    answer = subprocess.run([installed.folder / "orkas"], capture_output=True, text=True, check=True)
    assert answer.stdout.startswith("orkas 0.3.0")
    assert [p.name for p in installed.folder.parent.iterdir()] == ["orkas-0.2.0"]  # no staging, no old copy


def test_nothing_identifies_the_person_in_what_the_checker_sends(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    feed, _ = offer(host, key)
    up = updater(tmp_path, installed, feed, key)
    up.check()
    up.download()
    for request in host.requests:
        assert "?" not in request["path"]
        names = {name.lower() for name in request["headers"]}
        assert names <= {"host", "user-agent", "accept", "accept-encoding", "connection"}, names
        assert request["headers"]["User-Agent"] == "Orkas-update-check"


def test_a_feed_signed_by_another_key_or_changed_after_signing_is_refused(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    feed, _ = offer(host, new_key())  # not the release key
    up = updater(tmp_path, installed, feed, key)
    with pytest.raises(UpdateError, match="signature"):
        up.check()
    assert up.offered() is None and "signature" in (up.status()["error"] or "")
    signed = host.files["/feed.json"]
    offer(host, key)
    tampered = host.files["/feed.json"].replace(b"0.3.0", b"0.3.1")
    assert tampered != host.files["/feed.json"]
    with pytest.raises(UpdateError, match="signature"):
        verify(tampered, [key.public])
    for junk in (b"", b"{}", b"[1]", b'{"feed": 1, "signature": "x"}', signed[:40]):
        with pytest.raises(UpdateError):
            verify(junk, [key.public])
    untouched(installed)


def test_a_download_with_the_wrong_hash_cut_short_or_too_long_leaves_nothing_behind(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    feed, data = offer(host, key)
    up = updater(tmp_path, installed, feed, key)
    up.check()
    path = "/orkas-0.3.0-linux.tar.gz"
    host.files[path] = data[:-1] + bytes([data[-1] ^ 1])  # the same size, other bytes
    with pytest.raises(UpdateError, match="SHA-256"):
        up.prepare()
    host.files[path] = data
    host.cut[path] = len(data) // 2  # the connection closes halfway
    with pytest.raises(UpdateError, match=r"stopped after|download failed"):
        up.prepare()
    host.cut.clear()
    host.files[path] = data + b"more"
    with pytest.raises(UpdateError, match="larger"):
        up.prepare()
    assert list((tmp_path / "data" / "updates").glob("orkas-*")) == []  # no file, no .part
    untouched(installed)
    host.files[path] = data  # and it then succeeds, from scratch
    assert up.prepare().staged is not None


def test_an_older_or_equal_version_is_never_offered_and_an_older_feed_is_a_replay(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    feed, _ = offer(host, key, "0.1.9")
    up = updater(tmp_path, installed, feed, key)
    assert up.check() is None and up.offered() is None
    with pytest.raises(UpdateError, match="no newer"):
        up.prepare()
    offer(host, key, "0.2.0")
    assert up.check() is None
    now = datetime.now(UTC)
    offer(host, key, "0.3.0", published=now)
    assert up.check() is not None
    offer(host, key, "0.2.5", published=now - timedelta(days=30))  # an old, signed feed sent again
    with pytest.raises(UpdateError, match="older than one"):
        up.check()
    assert up.offered() is not None and up.offered().version == "0.3.0"  # type: ignore[union-attr]
    untouched(installed)


def test_a_version_that_moves_the_data_folder_forward_says_so_and_one_that_cannot_read_it_is_refused(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    feed, _ = offer(host, key, "0.3.0", data_format=CURRENT + 1)
    up = updater(tmp_path, installed, feed, key)
    up.check()
    assert up.status()["migrates"] is True
    assert up.prepare().migrates is True
    shutil.rmtree(staging_folder(installed.folder))  # type: ignore[arg-type]
    # A data folder already in a newer format than the offered version reads (a newer Orkas ran on it):
    offer(host, key, "0.4.0", build=portable("0.4.0", CURRENT))
    up = updater(tmp_path, installed, host.url + "/feed.json", key, data_format=CURRENT + 1)
    up.check()
    with pytest.raises(UpdateError, match="could not open it"):
        up.prepare()
    untouched(installed)


def test_a_new_version_that_does_not_start_here_is_not_installed(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    feed, _ = offer(host, key, build=portable("0.3.0", CURRENT, starts=False))
    up = updater(tmp_path, installed, feed, key)
    up.check()
    with pytest.raises(UpdateError, match="does not start here: error while loading shared libraries"):
        up.prepare()
    assert up.progress.error and "does not start" in up.progress.error
    untouched(installed)


def test_the_feed_is_read_at_most_once_a_day_across_restarts_even_when_it_fails(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    feed, _ = offer(host, key)
    clock = [time.time()]
    up = updater(tmp_path, installed, feed, key, now=lambda: clock[0])
    assert up.due_in() == 0
    up.check()
    again = updater(tmp_path, installed, feed, key, now=lambda: clock[0])  # the app restarted
    assert again.due_in() == DAY
    clock[0] += DAY - 1
    assert 0 < again.due_in() <= 1
    clock[0] += 1
    assert again.due_in() == 0
    down = updater(tmp_path, installed, "http://127.0.0.1:9/feed.json", key, now=lambda: clock[0])
    with pytest.raises(UpdateError, match="cannot reach"):
        down.check()
    assert down.due_in() == DAY  # unreachable counts as the day's check
    clock[0] += DAY
    forged = updater(tmp_path, installed, feed, new_key(), now=lambda: clock[0])
    with pytest.raises(UpdateError, match="signature"):
        forged.check()
    assert forged.due_in() == DAY  # and so does a feed that does not verify: never read again at once


def test_only_https_or_this_machine_is_read() -> None:
    assert allowed_url("https://example.org/feed.json") and allowed_url("http://127.0.0.1:8/f")
    for url in ("http://example.org/feed.json", "file:///etc/passwd", "ftp://x/y", "https:///nohost", "javascript:1"):
        assert not allowed_url(url), url
    assert parse_version("1.2.3") < parse_version("1.2.4rc1") < parse_version("1.2.4") < parse_version("1.10")
    with pytest.raises(UpdateError):
        parse_version("1.2.3-evil")


def test_an_update_from_the_terminal_waits_for_a_running_orkas_from_that_folder(
    installed: Installation,
) -> None:
    assert installed.folder is not None
    sleeper = installed.folder / "sleep"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", sleeper)
    # Started by a shell that exits at once: the program is no child of this process, as a window opened from the
    # menu is not a child of the terminal's `orkas update apply`.
    started = subprocess.run(["/bin/sh", "-c", f"{sleeper} 30 >/dev/null 2>&1 & echo $!"], capture_output=True,
                             text=True, check=True)  # fmt: skip
    pid = int(started.stdout)
    try:
        assert pid in others_running(installed.folder)
    finally:
        os.kill(pid, 9)
    deadline = time.monotonic() + 10
    while pid in others_running(installed.folder):
        assert time.monotonic() < deadline, "a process gone is still seen"
        time.sleep(0.02)


def test_installing_while_the_background_download_runs_waits_for_it(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    feed, _ = offer(host, key)
    up = updater(tmp_path, installed, feed, key)
    up.check()
    path = "/orkas-0.3.0-linux.tar.gz"
    host.hold[path] = threading.Event()  # the download stalls halfway until released
    downloading = threading.Thread(target=up.download)
    downloading.start()
    deadline = time.monotonic() + 10
    while up.progress.busy != "downloading":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with pytest.raises(UpdateError, match="already downloading"):
        up.check()  # a second check meanwhile is told, not run
    preparing: list[object] = []
    installing = threading.Thread(target=lambda: preparing.append(up.prepare()))
    installing.start()
    host.hold[path].set()
    installing.join(30)
    downloading.join(30)
    assert len(preparing) == 1 and [r["path"] for r in host.requests].count(path) == 1  # one download, used twice


def test_this_process_and_its_own_children_do_not_count_as_another_orkas(installed: Installation) -> None:
    assert installed.folder is not None
    sleeper = installed.folder / "sleep"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", sleeper)
    mine = subprocess.Popen(["/bin/sh", "-c", f"{sleeper} 30 & wait"])  # a grandchild, as the web engine is
    try:
        deadline = time.monotonic() + 10
        while not any(_children_of(mine.pid)):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert others_running(installed.folder) == []
    finally:
        mine.kill()
        for pid in _children_of(mine.pid):
            os.kill(pid, 9)
        mine.wait()


def _children_of(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def archive(*members: tuple[str, str, str]) -> bytes:
    """A tar.gz of (name, kind, data-or-link-target): kind file, dir, sym or hard."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, kind, value in members:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif kind in ("sym", "hard"):
                info.type, info.linkname = (tarfile.SYMTYPE if kind == "sym" else tarfile.LNKTYPE), value
                tar.addfile(info)
            else:
                data = value.encode()
                info.size, info.mode = len(data), 0o755
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


PROBE = probe_script("0.3.0", CURRENT)


@pytest.mark.parametrize(
    "members, why",
    [
        ((("orkas-0.3.0", "sym", "."), ("orkas-0.3.0/orkas", "file", PROBE)), "top is not a folder|through a link"),
        (
            (
                ("orkas-0.3.0/", "dir", ""),
                ("orkas-0.3.0/lib", "sym", "../.."),
                ("orkas-0.3.0/lib/x", "file", "x"),
                ("orkas-0.3.0/orkas", "file", PROBE),
            ),
            "leads outside|through a link",
        ),
        ((("orkas-0.3.0/orkas", "file", PROBE), ("orkas-0.3.0/up", "sym", "/etc")), "leads outside"),
        ((("orkas-0.3.0/orkas", "file", PROBE), ("orkas-0.3.0/h", "hard", "etc/passwd")), "leads outside"),
        ((("orkas-0.3.0/orkas", "file", PROBE), ("other/x", "file", "x")), "one folder"),
        ((("../orkas", "file", PROBE),), "one folder"),
        ((("orkas-0.3.0/orkas", "file", PROBE), ("orkas-0.3.0/" + "d/" * 600 + "x", "file", "x")), "too long"),
        ((("orkas-0.3.0/orkas", "sym", "/bin/sh"),), "leads outside|no orkas"),
        (
            (("orkas-0.3.0/orkas", "hard", "orkas-0.3.0/later"), ("orkas-0.3.0/later", "file", PROBE)),
            "not found|unpacked",
        ),
    ],
)
def test_an_archive_that_is_not_a_plain_build_is_refused_and_leaves_nothing(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation, members: tuple[Any, ...], why: str
) -> None:
    feed, _ = offer(host, key, build=archive(*members))
    up = updater(tmp_path, installed, feed, key)
    up.check()
    with pytest.raises(UpdateError, match=why):
        up.prepare()
    untouched(installed)


def test_feeds_from_the_future_or_too_deep_to_read_are_refused_clearly(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    feed, _ = offer(host, key, published=datetime.now(UTC) + timedelta(days=30000))
    up = updater(tmp_path, installed, feed, key)
    with pytest.raises(UpdateError, match="published in the future"):
        up.check()
    offer(host, key, "0.4.0")  # a right clock's feed is read after it: the future one was not remembered
    assert up.check() is not None
    with pytest.raises(UpdateError, match="not a signed release feed"):
        verify(b'{"feed": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", [key.public])


def test_a_download_that_says_it_is_older_than_this_version_is_not_installed(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    feed, _ = offer(host, key, "0.3.0", build=portable("0.1.0", CURRENT))
    up = updater(tmp_path, installed, feed, key)
    up.check()
    with pytest.raises(UpdateError, match=r"says it is Orkas 0\.1\.0, older than this 0\.2\.0"):
        up.prepare()
    untouched(installed)


def test_a_probe_that_leaves_a_child_behind_neither_stalls_nor_outlives_the_update(
    tmp_path: Path, host: ReleaseHost, key: KeyPair, installed: Installation
) -> None:
    lingering = PROBE.replace("#!/bin/sh\n", "#!/bin/sh\n(sleep 300 &)\n")
    feed, _ = offer(host, key, build=archive(("orkas-0.3.0/orkas", "file", lingering)))
    up = updater(tmp_path, installed, feed, key)
    up.check()
    began = time.monotonic()
    assert up.prepare().staged is not None
    assert time.monotonic() - began < 30  # answered, exited: not waiting on what it left behind
    left = subprocess.run(["pgrep", "-f", "sleep 300"], capture_output=True, text=True).stdout.split()
    assert left == []

"""Checking for, fetching and preparing a new version: what Settings → About, `orkas update` and the daily
check in the background all call.

`<data>/updates/state.json` remembers when the feed was last read (the automatic check runs at most once
a day, whether the app was restarted in between or not), the newest publication time accepted (an older
feed is a replay and refused) and what the feed offered. Downloads land in `<data>/updates/`, never
beside the app, and are checked before anything else reads them. Every step is a method that either
finishes or raises UpdateError with a sentence for the person; the running version is never touched until
the app has shut down for the exchange (install.exchange_and_restart).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from orkas import __version__
from orkas.adapter.settings.data_format import CURRENT as DATA_FORMAT
from orkas.adapter.updates.address import RELEASE_KEYS
from orkas.adapter.updates.feed import (
    FEED_LIMIT,
    Artifact,
    Release,
    UpdateError,
    parse_version,
    verify,
)
from orkas.adapter.updates.install import Installation, exchange_and_restart, installation, probe, remove, stage
from orkas.core.fsutil import atomic_write

log = logging.getLogger(__name__)
DAY = 24 * 3600.0
WAIT = 3600.0  # seconds an install waits for a download under way
FROM_THE_FUTURE = "the feed says it was published in the future: ignored (is this computer's clock right?)"
FUTURE = DAY  # a feed dated later than this from now is a wrong clock, not a release (it would block later feeds)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A verified version ready to install: `staged` (a tar.gz's unpacked folder, exchanged at restart) or
    `file` (a package or installer for the system to install), and what the person should know first."""

    version: str
    staged: Path | None = None
    file: Path | None = None
    command: str | None = None  # the .deb: what to type
    migrates: bool = False  # the new version moves the data folder to a format older versions cannot read


@dataclass(slots=True)
class Progress:
    busy: str | None = None  # "checking", "downloading", "preparing"
    done: int = 0
    total: int = 0
    error: str | None = None
    prepared: Prepared | None = None
    listeners: list[Callable[[], None]] = field(default_factory=list)


class Updater:
    def __init__(
        self,
        folder: Path,
        *,
        feed_url: Callable[[], str],
        keys: Sequence[str] = RELEASE_KEYS,
        installed: Installation | None = None,
        env: Mapping[str, str] | None = None,
        version: str = __version__,
        data_format: int = DATA_FORMAT,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.folder = folder
        self.feed_url = feed_url  # the setting, read at each check
        self.keys = tuple(keys)
        self.installed = installed or installation()
        self.env = dict(env or {})
        self.version = version
        self.data_format = data_format
        self.now = now
        self.progress = Progress()
        self._lock = threading.Lock()  # one check, download or preparation at a time
        self.pending: Prepared | None = None  # to install when the app has shut down

    # What the state file remembers ---------------------------------------------------------------------

    @property
    def _state_file(self) -> Path:
        return self.folder / "state.json"

    def _state(self) -> dict[str, Any]:
        try:
            state = json.loads(self._state_file.read_text())
            return state if isinstance(state, dict) else {}
        except (OSError, ValueError):
            return {}

    def _remember(self, **changes: Any) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self._state_file, (json.dumps({**self._state(), **changes}) + "\n").encode())

    def due_in(self) -> float:
        """Seconds until the automatic check may read the feed again (0: now)."""
        checked = self._state().get("checked")
        if not isinstance(checked, int | float) or checked > self.now():  # never, or a clock set back
            return 0.0
        return max(0.0, checked + DAY - self.now())

    def offered(self) -> Release | None:
        """What the last check found newer than this version (None: nothing, or not checked)."""
        offer = self._state().get("offer")
        try:
            release = _release(offer) if isinstance(offer, dict) else None
        except (KeyError, TypeError, ValueError):
            return None
        newer = release is not None and parse_version(release.version) > parse_version(self.version)
        return release if newer else None

    # The steps ------------------------------------------------------------------------------------------

    def check(self) -> Release | None:
        """Read and verify the feed; the newest release for this installation if it is newer than this one."""
        with self._busy("checking"):
            from orkas.adapter.updates import fetch

            try:
                raw = fetch.get(self.feed_url(), FEED_LIMIT)
            finally:  # read or not, verified or not: the automatic check reads it again tomorrow, not sooner
                self._remember(checked=self.now())
            feed = verify(raw, self.keys)
            if feed.published.timestamp() > self.now() + FUTURE:
                raise UpdateError(
                    "the feed says it was published in the future: ignored (is this computer's clock right?)"
                )
            seen = self._state().get("published")
            if isinstance(seen, str) and feed.published < datetime.fromisoformat(seen):
                raise UpdateError("the feed is older than one Orkas has already read (replayed?): ignored")
            newest = feed.newest(self.installed.platform, self.installed.kind)
            if newest is not None and parse_version(newest.version) <= parse_version(self.version):
                newest = None  # older or the same: never offered (an old feed cannot offer a downgrade)
            newer = newest
            self._remember(
                published=feed.published.isoformat(),
                offer=asdict(newer) if newer is not None else None,
            )
            log.info("update check: %s", f"{newer.version} is available" if newer else "up to date")
            return newer

    def download(self, *, wait: bool = False) -> Path:
        """The offered version's file for this installation, downloaded (or already here) and verified. `wait`:
        after a download already under way (the background's), rather than refusing."""
        release = self.offered()
        if release is None:
            raise UpdateError(f"no newer version than {self.version} is offered: check first")
        artifact = self._artifact(release)
        target = self.folder / f"orkas-{release.version}-{artifact.platform}.{artifact.kind}"
        with self._busy("downloading", total=artifact.size, wait=wait):
            if target.exists() and target.stat().st_size == artifact.size and _sha256(target) == artifact.sha256:
                return target  # kept from before, or the download this one waited for
            for old in self.folder.glob("orkas-*"):  # earlier versions' files, or this one's broken
                remove(old)

            def moved(done: int) -> None:
                self.progress.done = done
                self._tell()

            from orkas.adapter.updates import fetch

            return fetch.download(artifact.url, target, size=artifact.size, sha256=artifact.sha256, progress=moved)

    def prepare(self) -> Prepared:
        """Everything short of the exchange: downloaded, verified, and — for the portable build — unpacked
        beside this one and started once to say it can open this data folder."""
        release = self.offered()
        if release is None:
            raise UpdateError(f"no newer version than {self.version} is offered")
        kind = self.installed.kind
        if kind == "source":
            raise UpdateError("this Orkas runs from a source checkout: update it with git pull and scripts/setup.sh")
        file = self.download(wait=True)  # the one the background started, if it is still coming
        with self._busy("preparing", wait=True):
            if kind == "deb":
                prepared = Prepared(release.version, file=file, command=f"sudo apt install {file}")
            elif kind != "tar.gz":  # macOS and Windows: their installers, opened for the person (not exercised here)
                prepared = Prepared(release.version, file=file)
            else:
                assert self.installed.folder is not None
                staged = stage(file, self.installed.folder)
                try:
                    said = probe(staged / "orkas", self.env)
                except UpdateError:
                    remove(staged.parent)
                    raise
                if parse_version(said.version) < parse_version(self.version):
                    remove(staged.parent)
                    raise UpdateError(
                        f"the download says it is Orkas {said.version}, older than this {self.version}: not installed"
                    )
                if said.version != release.version:
                    log.warning("the feed offered %s; the download says it is %s", release.version, said.version)
                if said.data_format < self.data_format:
                    remove(staged.parent)
                    raise UpdateError(
                        f"Orkas {said.version} reads data format {said.data_format}, and your data folder is in "
                        f"format {self.data_format}: it could not open it. Not installed."
                    )
                prepared = Prepared(said.version, staged=staged, migrates=said.data_format > self.data_format)
            self.progress.prepared = prepared
            return prepared

    def status(self) -> dict[str, Any]:
        """What Settings → About shows."""
        release = self.offered()
        state = self._state()
        progress = self.progress
        prepared = progress.prepared
        return {
            "installed": self.version,
            "kind": self.installed.kind,
            "checked": state.get("checked"),
            "available": asdict(release) | {"size": self._size(release)} if release else None,
            "migrates": bool(release and release.data_format > self.data_format),
            "busy": progress.busy,
            "done": progress.done,
            "total": progress.total,
            "error": progress.error,
            "prepared": asdict(prepared) | {"staged": str(prepared.staged or ""), "file": str(prepared.file or "")}
            if prepared
            else None,
        }

    def restart_if_installing(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
        """Called by the entry point once the app has shut down: if the person asked to install a prepared
        portable version, exchange the folders and start it in this process's place (does not return)."""
        prepared = self.pending
        if prepared is not None and prepared.staged is not None and self.installed.folder is not None:
            exchange_and_restart(prepared.staged, self.installed.folder, self.installed.executable, list(argv), env)

    def clean(self) -> None:
        """An interrupted download's leftovers, and the files of versions no newer than this one (installed, or
        passed by): called when the daily check starts."""
        for partial in self.folder.glob("*.part"):
            partial.unlink(missing_ok=True)
        for old in self.folder.glob("orkas-*"):
            version = old.name.removeprefix("orkas-").split("-", 1)[0]
            try:
                if parse_version(version) <= parse_version(self.version):
                    remove(old)
            except UpdateError:
                remove(old)

    # ------------------------------------------------------------------------------------------------------

    def _artifact(self, release: Release) -> Artifact:
        artifact = release.artifact(self.installed.platform, self.installed.kind)
        if artifact is None:
            raise UpdateError(f"{release.version} has no {self.installed.kind} for {self.installed.platform}")
        return artifact

    def _size(self, release: Release) -> int | None:
        artifact = release.artifact(self.installed.platform, self.installed.kind)
        return artifact.size if artifact is not None else None

    def _busy(self, what: str, total: int = 0, wait: bool = False) -> _Busy:
        return _Busy(self, what, total, wait)

    def _tell(self) -> None:
        for listener in list(self.progress.listeners):
            listener()


class _Busy:
    """One step at a time; its failure is kept for the page to show."""

    def __init__(self, updater: Updater, what: str, total: int, wait: bool) -> None:
        self.updater, self.what, self.total, self.wait = updater, what, total, wait

    def __enter__(self) -> None:
        lock = self.updater._lock
        if not (lock.acquire(timeout=WAIT) if self.wait else lock.acquire(blocking=False)):
            raise UpdateError(f"already {self.updater.progress.busy or 'busy'}")
        progress = self.updater.progress
        progress.busy, progress.done, progress.total, progress.error = self.what, 0, self.total, None
        self.updater._tell()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        progress = self.updater.progress
        progress.busy = None
        if error is not None:
            progress.error = str(error) if isinstance(error, UpdateError) else f"{type(error).__name__}: {error}"
        self.updater._lock.release()
        self.updater._tell()


def _release(data: dict[str, Any]) -> Release:
    artifacts = tuple(Artifact(**a) for a in data["artifacts"])
    return Release(data["version"], data["notes"], int(data["data_format"]), artifacts)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()

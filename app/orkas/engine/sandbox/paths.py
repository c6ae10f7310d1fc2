"""The one path policy every tool goes through.

A path is allowed when, after resolving every symlink, it lies inside the workspace, the
conversation's attachments, or a folder the user granted, and inside none of the protected places:
credential folders, system folders, the home folder itself, and the app's own data. Checks are
containment checks on resolved paths, component by component (so `proj-evil` is not inside `proj`).
For writes, a file with several hard links is refused: one of its other names may live outside.
Reads go through `open_read`: the file is opened through its folder reached from the root without
following a link (pinned.py) and without following one at the end, the opened file is re-checked against
the allowed folders (`verify_open`, so a symlink swapped in between the check and the open is caught),
and a file that is another name (a hard link) of a protected file is refused (links.py). Every tool,
indexer, watcher and attachment opens files this way; a folder or file the person picks as a source (a
knowledge-base folder, a dropped file) gets a policy of its own (`PathPolicy.source`), so a symlink inside
it cannot lead out of it.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from orkas.core.errors import OrkasError
from orkas.engine.sandbox.links import protected_inodes

CREDENTIAL_DIRS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".password-store",
    ".local/share/keyrings",
    "Library/Keychains",
    ".config/gh",
    ".terraform.d",
    ".vault-token",
    # other agent tools' own keys: Orkas reads their skill folders, never these
    ".claude/.credentials.json",
    ".codex/auth.json",
)
SYSTEM_DIRS = (
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/boot",
    "/dev",
    "/proc",
    "/sys",
    "/root/.ssh",
    "/var/lib",
    "/var/log",
    "/System",
    "/Library",
    "/private/etc",
    "/Applications",
    "C:\\Windows",
    "C:\\Program Files",
    "C:\\Program Files (x86)",
    "C:\\ProgramData",
)
# macOS and Windows file systems usually fold case (and macOS normalizes Unicode): compare folded.
FOLDS_CASE = sys.platform in ("darwin", "win32")


class PathDenied(OrkasError):
    """A path the policy refuses; `reason` says why in words a person (and the model) understands."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path!r}: {reason}")
        self.path = path
        self.reason = reason


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(os.path.expanduser(path)))


def _key(path: Path) -> tuple[str, ...]:
    parts = path.parts
    if FOLDS_CASE:
        parts = tuple(unicodedata.normalize("NFC", p).casefold() for p in parts)
    return parts


def _inside(path: Path, root: Path) -> bool:
    child, parent = _key(path), _key(root)
    return child[: len(parent)] == parent


class PathPolicy:
    def __init__(
        self,
        workspace: Path | str,
        granted: Iterable[Path | str] = (),
        protected: Iterable[Path | str] = (),
        *,
        home: Path | str | None = None,
        own: Iterable[Path | str] = (),
        readable: Iterable[Path | str] = (),
    ) -> None:
        """`own` names folders inside a protected place that belong to this policy (a conversation's own
        workspace and attachments inside the app's data): they may be roots; their siblings stay protected.
        `readable` names folders that may be read (and run from) but never written: the skills an agent
        may use, some of which live in the app's data. Never a credential or system folder."""
        self.home = _real(home if home is not None else Path.home())
        given = [_real(p) for p in protected]
        secrets = given + [self.home / name for name in CREDENTIAL_DIRS]
        self._secrets = [_real(p) if p.exists() else p for p in secrets]
        self._app_data = self._secrets[: len(given)]  # the app's own places: readable carve-outs may lie inside
        system = [Path(p) for p in SYSTEM_DIRS if Path(p).is_absolute()]
        self._protected = self._secrets + [_real(p) if p.exists() else p for p in system]
        self._own = [_real(p) for p in own]
        for folder in self._own:
            if any(_inside(place, folder) for place in self._protected):
                raise PathDenied(str(folder), "it contains a protected location")
        self.workspace = self._allowed_root(workspace)
        self._roots: list[Path] = [self.workspace]
        self._readable: list[Path] = []
        for place in readable:
            self.add_readable(place)
        for path in granted:
            self.grant(path)

    @classmethod
    def source(
        cls, path: Path | str, *, protected: Iterable[Path | str] = (), home: Path | str | None = None
    ) -> PathPolicy:
        """A policy rooted at one folder or file the person chose to give Orkas (a knowledge-base source, a
        dropped file). Raises `PathDenied` for the home folder itself and for protected places."""
        return cls(path, protected=protected, home=home)

    @property
    def roots(self) -> tuple[Path, ...]:
        return tuple(self._roots)

    @property
    def readable(self) -> tuple[Path, ...]:
        """Folders open to reading only (skills): mounted read-only for confined commands."""
        return tuple(self._readable)

    def add_readable(self, path: Path | str) -> Path:
        """Allow reading a folder, never writing it. Raises `PathDenied` for the home folder, a folder holding
        a protected place, and anything inside a credential or system folder."""
        folder = self.may_read(path)
        if folder not in self._readable:
            self._readable.append(folder)
        return folder

    def may_read(self, path: Path | str) -> Path:
        """The folder `path` names, if it could be made readable (add_readable's checks, changing nothing)."""
        folder = _real(path)
        if folder == self.home or _inside(self.home, folder):
            raise PathDenied(str(path), "the home folder (or a folder containing it) can never be opened")
        for protected in self._protected:
            ours = protected in self._app_data  # the app's own folders: one of them, or a part, may be read
            if (_inside(protected, folder) and not (ours and protected == folder)) or (
                _inside(folder, protected) and not ours
            ):
                raise PathDenied(str(path), f"it is or contains a protected location ({protected})")
        return folder

    @property
    def protected(self) -> tuple[Path, ...]:
        return tuple(self._protected)

    @property
    def secrets(self) -> tuple[Path, ...]:
        """Protected places that a confined process must not even see (credentials, app data)."""
        return tuple(self._secrets)

    def grant(self, path: Path | str) -> Path:
        """Allow a folder (or file) the user chose. Raises `PathDenied` for places never grantable."""
        root = self._allowed_root(path)
        if not any(_inside(root, r) for r in self._roots):
            self._roots.append(root)
        return root

    def _allowed_root(self, path: Path | str) -> Path:
        raw = str(path)
        if "\0" in raw:
            raise PathDenied(raw, "the path contains a null byte")
        root = _real(raw)
        if root == self.home or _inside(self.home, root):
            raise PathDenied(raw, "the home folder (or a folder containing it) can never be granted")
        owned = any(_inside(root, own) for own in self._own)
        for protected in self._protected:
            if (_inside(root, protected) and not owned) or _inside(protected, root):
                raise PathDenied(raw, f"it is or contains a protected location ({protected})")
        return root

    def check(self, path: Path | str, *, write: bool, resolve: bool = True) -> Path:
        """The resolved path if the policy allows it, else `PathDenied` with the reason. With `resolve=False`
        an absolute path is judged as written (the caller resolved it already: a link on the way must then
        not be followed, and opening through `open_read` refuses one)."""
        raw = str(path)
        if not raw:
            raise PathDenied(raw, "the path is empty")
        if "\0" in raw:
            raise PathDenied(raw, "the path contains a null byte")
        candidate = Path(os.path.expanduser(raw))
        if not candidate.is_absolute():
            candidate = self.workspace / candidate
        resolved = _real(candidate) if resolve else Path(os.path.normpath(candidate))
        if not write and any(_inside(resolved, folder) for folder in self._readable):
            return resolved  # checked when the folder was added: nothing protected lies inside
        owned = any(_inside(resolved, own) for own in self._own)
        for protected in self._protected:
            if _inside(resolved, protected) and not owned:
                raise PathDenied(raw, f"it is inside a protected location ({protected})")
        if not any(_inside(resolved, root) for root in self._roots):
            where = "the workspace" if len(self._roots) == 1 else "the workspace or a granted folder"
            raise PathDenied(raw, f"it resolves to {resolved}, outside {where}")
        if write:
            self._check_hard_links(raw, resolved)
        return resolved

    def _check_hard_links(self, raw: str, resolved: Path) -> None:
        try:
            info = resolved.lstat()
        except FileNotFoundError:
            return
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            raise PathDenied(raw, "the file has other hard links, which may live outside the workspace")

    def open_read(self, raw: Path | str) -> tuple[Path, BinaryIO]:
        """Check `raw` for reading and open it: no symlink followed at the end, the opened file re-checked,
        only regular files, never another name of a protected file. The caller closes the file."""
        # An absolute path comes resolved from the caller's own check (a tool's): resolving it again here could
        # land somewhere else if a folder on the way was swapped for a link since — somewhere that check, and
        # the caller's secret check, never saw. So it is opened as it is, never following a link.
        given = Path(raw)
        resolved_by_caller = given.is_absolute() and os.path.normpath(given) == str(given)
        inside = resolved_by_caller and any(_inside(given, root) for root in [*self._roots, *self._readable])
        path = self.check(raw, write=False, resolve=not inside)  # outside as written: a link before the root
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = self._open_pinned(path, flags)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise PathDenied(str(raw), "it was replaced by a symbolic link") from e
            raise
        try:
            self.verify_open(fd, path)
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise PathDenied(str(raw), "it is not a regular file")
            if info.st_nlink > 1:
                self._check_other_names(str(raw), info)
            os.set_blocking(fd, True)
            return path, os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def _open_pinned(self, path: Path, flags: int) -> int:
        """Open `path` through its folder reached from its root without following a link (pinned.py): a folder
        swapped for a link after the check — even to another folder inside the workspace — is not followed."""
        from orkas.engine.sandbox import pinned

        inside = any(_inside(path.parent, root) for root in [*self._roots, *self._readable])
        if not pinned.SUPPORTED or not inside:  # a granted file is its own root
            return os.open(path, flags)
        with pinned.pinned_folder(self, path.parent, write=False) as folder:
            return os.open(path.name, flags, dir_fd=folder)

    def read_bytes(self, raw: Path | str, limit: int | None = None) -> bytes:
        """The file's bytes (at most `limit`), read through `open_read`."""
        _path, handle = self.open_read(raw)
        with handle:
            return handle.read() if limit is None else handle.read(limit)

    def _check_other_names(self, raw: str, info: os.stat_result) -> None:
        inodes = protected_inodes(self.home, self._secrets)
        if inodes is None:
            raise PathDenied(
                raw, "the file has other names (hard links) that cannot all be checked; copy it to read it"
            )
        if (info.st_dev, info.st_ino) in inodes:
            raise PathDenied(raw, "it is another name (a hard link) of a protected file")

    def verify_open(self, fd: int, resolved: Path) -> None:
        """After opening `resolved`, make sure the descriptor is that very file (no swap since the check)."""
        opened = os.fstat(fd)
        try:
            current = os.lstat(resolved)  # a symlink swapped in has its own inode
        except FileNotFoundError as e:
            raise PathDenied(str(resolved), "the file was moved while it was being opened") from e
        if (opened.st_dev, opened.st_ino) != (current.st_dev, current.st_ino):
            raise PathDenied(str(resolved), "the file was replaced while it was being opened")
        proc = Path(f"/proc/self/fd/{fd}")
        if proc.exists():
            actual = Path(os.readlink(proc))
            if not any(_inside(actual, root) for root in [*self._roots, *self._readable]):
                raise PathDenied(str(resolved), f"the opened file is really {actual}, outside the allowed folders")

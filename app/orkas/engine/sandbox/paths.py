"""The one path policy every tool goes through.

A path is allowed when, after resolving every symlink, it lies inside the workspace, the
conversation's attachments, or a folder the user granted, and inside none of the protected places:
credential folders, system folders, the home folder itself, and the app's own data. Checks are
containment checks on resolved paths, component by component (so `proj-evil` is not inside `proj`).
For writes, a file with several hard links is refused: one of its other names may live outside.
After opening, `verify_open` re-checks the opened file against the path, so a symlink swapped in
between the check and the open is caught.
"""

from __future__ import annotations

import os
import stat
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from orkas.core.errors import OrkasError

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
    ) -> None:
        self.home = _real(home if home is not None else Path.home())
        secrets = [_real(p) for p in protected] + [self.home / name for name in CREDENTIAL_DIRS]
        self._secrets = [_real(p) if p.exists() else p for p in secrets]
        system = [Path(p) for p in SYSTEM_DIRS if Path(p).is_absolute()]
        self._protected = self._secrets + [_real(p) if p.exists() else p for p in system]
        self.workspace = self._allowed_root(workspace)
        self._roots: list[Path] = [self.workspace]
        for path in granted:
            self.grant(path)

    @property
    def roots(self) -> tuple[Path, ...]:
        return tuple(self._roots)

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
        for protected in self._protected:
            if _inside(root, protected) or _inside(protected, root):
                raise PathDenied(raw, f"it is or contains a protected location ({protected})")
        return root

    def check(self, path: Path | str, *, write: bool) -> Path:
        """The resolved path if the policy allows it, else `PathDenied` with the reason."""
        raw = str(path)
        if not raw:
            raise PathDenied(raw, "the path is empty")
        if "\0" in raw:
            raise PathDenied(raw, "the path contains a null byte")
        candidate = Path(os.path.expanduser(raw))
        if not candidate.is_absolute():
            candidate = self.workspace / candidate
        resolved = _real(candidate)
        for protected in self._protected:
            if _inside(resolved, protected):
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
            if not any(_inside(actual, root) for root in self._roots):
                raise PathDenied(str(resolved), f"the opened file is really {actual}, outside the allowed folders")

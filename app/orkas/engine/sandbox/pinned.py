"""Acting on what the sandbox can write without following a link it planted, even one swapped in mid-call.

The workspace and the granted folders are writable by approved commands, and a background process keeps
running while a file tool works: it can swap a folder for a symbolic link between the path policy's check
and the tool's open (`renameat2(RENAME_EXCHANGE)` does it atomically, in a loop). So once the policy has
said yes, a file tool never opens that path by name again. It walks from the root the policy allowed, one
component at a time, each opened relative to the one before with O_NOFOLLOW | O_DIRECTORY, and acts on the
last folder through its descriptor (openat, renameat, unlinkat, fwalk). A link met on the way fails the call;
a swap after the walk changes nothing, because the descriptor still is the folder that was checked.

Where the system has no descriptor-relative calls (Windows), the paths are used as before: there the
confined commands cannot run in the background beside the tools (no bubblewrap), so there is no racer.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from orkas.engine.sandbox.paths import PathDenied, PathPolicy, _inside

DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
SUPPORTED = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd and hasattr(os, "fwalk")


def _root_of(policy: PathPolicy, folder: Path, *, write: bool) -> Path:
    roots = list(policy.roots) if write else [*policy.roots, *policy.readable]
    inside = [root for root in roots if _inside(folder, root)]
    if not inside:
        raise PathDenied(str(folder), "it is outside the workspace and the granted folders")
    return max(inside, key=lambda root: len(root.parts))


@contextmanager
def pinned_folder(policy: PathPolicy, folder: Path, *, write: bool, create: bool = False) -> Iterator[int]:
    """A descriptor of `folder` (resolved and allowed by `policy`), reached without following any link.
    With `create`, missing folders are made with the person's permissions. Raises `PathDenied` when a
    component is (now) a link or not a folder."""
    root = _root_of(policy, folder, write=write)
    fd = os.open(root, DIR_FLAGS)
    try:
        for part in folder.relative_to(root).parts:
            child = _child(fd, part, folder, create)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _child(fd: int, part: str, folder: Path, create: bool) -> int:
    try:
        try:
            return os.open(part, DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            from orkas.core.fsutil import person_umask

            try:
                os.mkdir(part, 0o777 & ~person_umask(), dir_fd=fd)
            except FileExistsError:
                pass
            return os.open(part, DIR_FLAGS, dir_fd=fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            reason = f"{part!r} on the way is a link or not a folder (it may have just been swapped)"
            raise PathDenied(str(folder), reason) from e
        raise


def write_file(policy: PathPolicy, path: Path, data: bytes, *, default_mode: int) -> os.stat_result:
    """Replace `path` (resolved and allowed for writing) with `data` atomically, creating its folders:
    a temp file beside it, fsync, rename, fsync the folder, all through the pinned folder. Keeps the mode of
    a file it replaces; refuses one with other hard links. Returns the written file's status."""
    if not SUPPORTED:
        _write_by_name(path, data, default_mode)
        return path.stat()
    with pinned_folder(policy, path.parent, write=True, create=True) as folder:
        mode = default_mode
        try:
            info = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None:
            if stat.S_ISDIR(info.st_mode):
                raise PathDenied(str(path), "it is a folder")
            if stat.S_ISREG(info.st_mode):
                if info.st_nlink > 1:
                    raise PathDenied(str(path), "the file has other hard links, which may live outside the workspace")
                mode = info.st_mode & 0o7777
        temp = f".{path.name[:200]}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fchmod(handle.fileno(), mode)
                os.fsync(handle.fileno())
                written = os.fstat(handle.fileno())
            os.rename(temp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
            _touched(policy)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=folder)
            except FileNotFoundError:
                pass
            raise
        os.fsync(folder)
        return written


def _touched(policy: PathPolicy) -> None:
    """A file tool wrote: the secret scan looks at every folder before the next command."""
    from orkas.engine.sandbox.secret_files import SECRETS

    SECRETS.touched(policy.roots)


def _write_by_name(path: Path, data: bytes, default_mode: int) -> None:
    from orkas.core.fsutil import atomic_write, make_folders_for_person

    make_folders_for_person(path.parent)
    mode = path.stat().st_mode & 0o7777 if path.exists() else default_mode
    atomic_write(path, data, mode=mode)


def remove(policy: PathPolicy, path: Path) -> None:
    """Delete the file (or empty folder) `path`, resolved and allowed for writing, through its pinned folder."""
    if not SUPPORTED:
        path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()
        return
    with pinned_folder(policy, path.parent, write=True) as folder:
        info = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            os.rmdir(path.name, dir_fd=folder)
        else:
            os.unlink(path.name, dir_fd=folder)
    _touched(policy)


def status(policy: PathPolicy, path: Path) -> os.stat_result:
    """`path`'s own status (not a link's target), reached through its pinned folder."""
    if not SUPPORTED or not any(_inside(path.parent, r) for r in [*policy.roots, *policy.readable]):
        return os.stat(path, follow_symlinks=False)
    with pinned_folder(policy, path.parent, write=False) as folder:
        return os.stat(path.name, dir_fd=folder, follow_symlinks=False)


def walk(policy: PathPolicy, top: Path) -> Iterator[tuple[Path, list[str], list[str]]]:
    """`os.walk(top)` that never leaves the folders it was given: each folder is opened relative to its parent
    and checked to be the very folder listed (fwalk), so a folder swapped for a link is skipped, not followed.
    Yields (folder, subfolders, files); prune `subfolders` in place as with os.walk."""
    if not SUPPORTED:
        yield from ((Path(d), dirs, files) for d, dirs, files in os.walk(top))
        return
    with pinned_folder(policy, top, write=False) as pinned:
        for relative, dirs, files, _fd in os.fwalk(".", dir_fd=pinned, follow_symlinks=False):
            yield top / relative if relative != "." else top, dirs, files

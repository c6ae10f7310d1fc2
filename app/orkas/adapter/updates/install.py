"""Putting a verified release in place, by the conventions of how this copy of Orkas was installed.

- The portable tar.gz: the new folder is unpacked beside the running one, started once to ask its version
  and the data format it reads (`orkas update probe`: it must start on this machine, and must be able to
  open the person's data folder), and only then exchanged with the running folder in one rename
  (`renameat2(RENAME_EXCHANGE)`: there is no moment without a complete Orkas at that path). The old folder
  is removed. Until the exchange nothing of the running version has changed, whatever fails.
- The .deb: handed to the system's package tool — Orkas says the command (`sudo apt install ./…deb`) or
  opens the file with the desktop's software installer; it never asks for root itself.
- macOS (.dmg) and Windows (setup .exe): the file is opened, for the person to drag the app or run the
  installer as those platforms do. Written to their conventions, not exercised on these machines.
- A source checkout is updated with git, not here.

The exchange happens after the app has shut down and just before it starts the new version in its place
(`exchange_and_restart`): a running Python process imports lazily from its folder, and must never import
a module of the next version.
"""

from __future__ import annotations

import json
import os
import platform
import posixpath
import shutil
import subprocess
import sys
import tarfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NoReturn

from orkas.adapter.updates.feed import UpdateError
from orkas.core.fsutil import replace_folder

Kind = Literal["tar.gz", "deb", "dmg", "exe", "source"]
DEB_HOME = Path("/opt/orkas")  # build/deb.py's install folder
PROBE_TIMEOUT = 120.0  # seconds: a first start of a fresh bundle on a slow disk
MAX_MEMBERS = 200_000  # a build holds a few thousand files
MAX_UNPACKED = 8 << 30  # bytes unpacked (a build is about half a gigabyte)
MAX_NAME = 1024  # characters of a member's name or link


@dataclass(frozen=True, slots=True)
class Installation:
    kind: Kind
    executable: Path  # what runs Orkas (the bundle's `orkas`)
    folder: Path | None = None  # the folder a tar.gz update replaces

    @property
    def platform(self) -> str:
        system = {"darwin": "macos", "win32": "windows"}.get(sys.platform, "linux")
        return f"{system}-{platform.machine().lower() or 'unknown'}"


def installation() -> Installation:
    """How the running Orkas was installed."""
    executable = Path(sys.executable).resolve()
    if not getattr(sys, "frozen", False):
        return Installation("source", executable)
    if sys.platform == "darwin":
        return Installation("dmg", executable)
    if sys.platform == "win32":
        return Installation("exe", executable)
    if executable.parent == DEB_HOME:
        return Installation("deb", executable)
    return Installation("tar.gz", executable, executable.parent)


@dataclass(frozen=True, slots=True)
class Probe:
    version: str
    data_format: int


def probe(executable: Path, env: Mapping[str, str]) -> Probe:
    """Start `executable` once to ask what it is (it opens no data folder to answer). `env`: this process's
    environment, less what points a program at this version's libraries and modules."""
    from orkas.engine.sandbox.executor import run_own_program

    try:
        answer = run_own_program([str(executable), "update", "probe"], timeout=PROBE_TIMEOUT, env=another_bundle(env))
        if answer.returncode != 0:
            raise UpdateError(f"the new version does not start here: {answer.stderr.strip()[-300:] or 'no reason'}")
        said = json.loads(answer.stdout.strip().splitlines()[-1])
        return Probe(str(said["version"]), int(said["data_format"]))
    except subprocess.TimeoutExpired:
        raise UpdateError(f"the new version did not answer in {PROBE_TIMEOUT:.0f} s") from None
    except OSError as e:
        raise UpdateError(f"the new version does not start here: {e.strerror or e}") from None
    except (ValueError, KeyError, IndexError, TypeError):
        raise UpdateError("the new version did not say what it is: refused") from None


def another_bundle(env: Mapping[str, str]) -> dict[str, str]:
    """The environment for starting another PyInstaller bundle (or this one anew): without what this bundle's
    start-up set for its own libraries and modules, and told to start as a first instance (PyInstaller ≥ 6.10)."""
    fresh = {k: v for k, v in env.items() if not k.startswith(("_PYI", "_MEIPASS", "PYTHON", "LD_LIBRARY_PATH"))}
    if env.get("LD_LIBRARY_PATH_ORIG"):  # the person's own, kept aside by the bootloader
        fresh["LD_LIBRARY_PATH"] = env["LD_LIBRARY_PATH_ORIG"]
    fresh["PYINSTALLER_RESET_ENVIRONMENT"] = "1"
    return fresh


def staging_folder(current: Path) -> Path:
    """Beside the running folder: the exchange is a rename, which stays on one file system."""
    return current.parent / f".{current.name}.update"


def stage(archive: Path, current: Path) -> Path:
    """The tar.gz unpacked beside `current`; returns the new version's folder (the archive's one top folder). Whatever
    fails leaves nothing beside `current`."""
    staging = staging_folder(current)
    remove(staging)  # an earlier, interrupted attempt
    try:
        staging.mkdir(mode=0o755)
        with tarfile.open(archive) as tar:
            top = _checked(tar.getmembers())
            tar.extractall(staging, filter="data")  # and the data filter: no absolute paths, devices or set-id bits
        folder = staging / top
        if folder.is_symlink() or not folder.is_dir():
            raise UpdateError("the release archive's top is not a folder: refused")
        program = folder / "orkas"
        if program.is_symlink() or not program.is_file() or not os.access(program, os.X_OK):
            raise UpdateError("the release archive holds no orkas program: refused")
        return folder
    except PermissionError:
        remove(staging)
        raise UpdateError(
            f"Orkas cannot write beside its folder ({current.parent}); unpack the new version by hand"
        ) from None
    except (OSError, tarfile.TarError, EOFError, zlib.error, KeyError) as e:  # KeyError: a link before its file
        remove(staging)
        raise UpdateError(f"the release archive could not be unpacked: {e}") from None
    except BaseException:
        remove(staging)
        raise


def _checked(members: list[tarfile.TarInfo]) -> str:
    """The archive's one top folder, once every member is a plain file, folder or link that stays inside it: no link
    through which another member is written (tarfile's own filter could be led out through a chain of links longer
    than the system's path limit: CVE-2025-4517), nothing of unreasonable size or number. Raises UpdateError."""
    if len(members) > MAX_MEMBERS:
        raise UpdateError(f"the release archive holds more than {MAX_MEMBERS} files: refused")
    if sum(m.size for m in members if m.isfile()) > MAX_UNPACKED:
        raise UpdateError(f"the release archive unpacks to more than {MAX_UNPACKED >> 30} GiB: refused")
    names = [posixpath.normpath(m.name) for m in members]
    tops = {name.split("/", 1)[0] for name in names if name != "."}
    if len(tops) != 1 or tops & {"..", "."} or any(name.startswith("/") for name in names):
        raise UpdateError("the release archive does not hold one folder: refused")
    top = tops.pop()
    links = {name for name, m in zip(names, members, strict=True) if m.issym() or m.islnk()}
    for name, member in zip(names, members, strict=True):
        if len(member.name) > MAX_NAME or len(member.linkname) > MAX_NAME:
            raise UpdateError("the release archive has a name too long to be a build's: refused")
        if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            raise UpdateError(f"the release archive holds {member.name!r}, which is no file: refused")
        if name == top and not member.isdir():
            raise UpdateError("the release archive's top is not a folder: refused")
        parents = name.split("/")[:-1]
        if any("/".join(parents[: i + 1]) in links for i in range(len(parents))):
            raise UpdateError(f"the release archive writes {member.name!r} through a link: refused")
        if member.issym() or member.islnk():
            base = posixpath.dirname(name) if member.issym() else ""
            target = posixpath.normpath(posixpath.join(base, member.linkname))
            if member.linkname.startswith("/") or not (target == top or target.startswith(top + "/")):
                raise UpdateError(f"the release archive's link {member.name!r} leads outside it: refused")
    return top


def remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)


def others_running(folder: Path) -> list[int]:
    """Processes running a program from `folder` other than this one and its own children (the window's web
    engine runs from there too): Linux's /proc; elsewhere none are seen."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            exe = Path(os.readlink(entry / "exe"))
        except OSError:
            continue
        if folder in exe.parents and not _ours(int(entry.name)):
            found.append(int(entry.name))
    return found


def _ours(pid: int) -> bool:
    """`pid` is this process or one it started (at any depth)."""
    me = os.getpid()
    for _ in range(64):
        if pid == me:
            return True
        if pid <= 1:
            return False
        try:
            stat = (Path("/proc") / str(pid) / "stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state: the parent's pid
    return False


def exchange(new: Path, current: Path) -> None:
    """`new` takes `current`'s place in one step; the old version is then removed. On failure both stay as
    they were."""
    staging = new.parent  # staging_folder(current): emptied and removed once the exchange is done
    old = current.with_name(f".{current.name}.previous")  # used only where the system cannot exchange two paths
    remove(old)
    try:
        remove(replace_folder(new, current, old))
    except OSError as e:
        raise UpdateError(f"the new version could not take the old one's place: {e.strerror or e}") from None
    remove(staging)


def exchange_and_restart(
    new: Path, current: Path, executable: Path, argv: list[str], env: Mapping[str, str]
) -> NoReturn:
    """Called once the app has shut down: the exchange, then the new version started in this process's place
    with the same arguments and environment. If the exchange fails the old version starts again, and says why."""
    from orkas.engine.sandbox.executor import replace_process  # before the exchange: nothing imported after it

    try:
        exchange(new, current)
    except (OSError, UpdateError) as e:
        print(f"orkas: the update was not installed: {e}", file=sys.stderr, flush=True)
    replace_process(executable, argv, another_bundle(env))
    raise SystemExit(1)  # not reached: exec does not return

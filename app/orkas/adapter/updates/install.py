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

import ctypes
import errno
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NoReturn

from orkas.adapter.updates.feed import UpdateError

Kind = Literal["tar.gz", "deb", "dmg", "exe", "source"]
DEB_HOME = Path("/opt/orkas")  # build/deb.py's install folder
RENAME_EXCHANGE = 2
PROBE_TIMEOUT = 120.0  # seconds: a first start of a fresh bundle on a slow disk


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
    """The tar.gz unpacked beside `current`; returns the new version's folder (the archive's one top folder)."""
    staging = staging_folder(current)
    remove(staging)  # an earlier, interrupted attempt
    try:
        staging.mkdir(mode=0o755)
        with tarfile.open(archive) as tar:
            tops = {Path(member.name).parts[0] for member in tar.getmembers() if member.name not in ("", ".")}
            if len(tops) != 1:
                raise UpdateError("the release archive does not hold one folder: refused")
            tar.extractall(staging, filter="data")  # no absolute paths, no links out, no devices
    except PermissionError:
        remove(staging)
        raise UpdateError(
            f"Orkas cannot write beside its folder ({current.parent}); unpack the new version by hand"
        ) from None
    except (OSError, tarfile.TarError) as e:
        remove(staging)
        raise UpdateError(f"the release archive could not be unpacked: {e}") from None
    folder = staging / tops.pop()
    if not (folder / "orkas").is_file() or not os.access(folder / "orkas", os.X_OK):
        remove(staging)
        raise UpdateError("the release archive holds no orkas program: refused")
    return folder


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
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    at_cwd = -100
    if (
        renameat2 is not None
        and renameat2(at_cwd, os.fsencode(new), at_cwd, os.fsencode(current), RENAME_EXCHANGE) == 0
    ):
        remove(staging)  # holding the old version now
        return
    code = ctypes.get_errno() if renameat2 is not None else errno.ENOSYS
    if code not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        raise UpdateError(f"the new version could not take the old one's place: {os.strerror(code)}")
    old = current.with_name(f".{current.name}.previous")  # a file system without exchange: two renames
    remove(old)
    os.rename(current, old)
    try:
        os.rename(new, current)
    except OSError:
        os.rename(old, current)
        raise
    remove(old)
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

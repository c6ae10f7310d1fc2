"""The Debian package: PyInstaller's folder at /opt/orkas, `orkas` on the PATH, a menu entry and the
hicolor icons, and as Depends the system packages that hold every library the bundle links against
and does not carry (found with ldd, mapped with dpkg -S). Built with dpkg-deb, owned by root.

Those Depends already named the package of every system library PyInstaller copies into the bundle (ldd
finds them as what the bundle's other binaries link): the .deb leaves out the copies that are byte for
byte a packaged library of the build machine, and the app loads the system's (35 MB of copies; the
portable tar.gz keeps them).

The data folder (~/.local/share/Orkas, or ORKAS_HOME) is never under /opt/orkas: removing or upgrading
the package leaves it alone.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
from pathlib import Path

BUILD = Path(__file__).resolve().parent
ROOT = BUILD.parent
ELF = b"\x7fELF"
ALWAYS = ("libc6",)  # the bundle's own loader needs it even where ldd lists nothing

LAUNCHER = """#!/bin/sh
# Orkas (the package's launcher): the app lives in /opt/orkas; your data in ~/.local/share/Orkas.
exec /opt/orkas/orkas "$@"
"""
REFRESH = """#!/bin/sh
set -e
if command -v update-desktop-database >/dev/null 2>&1; then
    update-desktop-database -q /usr/share/applications || true
fi
if command -v gtk-update-icon-cache >/dev/null 2>&1; then
    gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor || true
fi
"""

# Anything the app left under /opt/orkas (never the data folder, which is in the person's home).
CLEAN = """if [ "$1" = remove ] || [ "$1" = purge ]; then rm -rf /opt/orkas; fi
"""


def build_deb(folder: Path, out: Path, version: str, *, fast: bool = False) -> Path:
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    stage = out / "deb-root"
    shutil.rmtree(stage, ignore_errors=True)
    shutil.copytree(folder, stage / "opt" / "orkas", symlinks=True)
    unbundle_system_libraries(stage / "opt" / "orkas" / "_internal")
    # Qt WebEngine makes this (empty) folder on its first start if it is missing: shipped, it is the
    # package's, and goes with it.
    (stage / "opt" / "orkas" / "_internal" / "PySide6" / "Qt" / "resources" / "locales").mkdir(exist_ok=True)
    launcher = stage / "usr" / "bin" / "orkas"
    launcher.parent.mkdir(parents=True)
    launcher.write_text(LAUNCHER)
    launcher.chmod(0o755)
    applications = stage / "usr" / "share" / "applications"
    applications.mkdir(parents=True)
    shutil.copy(BUILD / "linux" / "orkas.desktop", applications / "orkas.desktop")
    shutil.copytree(ROOT / "icons" / "hicolor", stage / "usr" / "share" / "icons" / "hicolor")
    docs = stage / "usr" / "share" / "doc" / "orkas"
    docs.mkdir(parents=True)
    (docs / "copyright").write_text(_copyright())
    control = stage / "DEBIAN"
    control.mkdir()
    size_kb = sum(f.stat().st_size for f in stage.rglob("*") if f.is_file() and not f.is_symlink()) // 1024
    (control / "control").write_text(
        f"Package: orkas\nVersion: {version}\nArchitecture: {arch}\n"
        "Maintainer: Orkas developers <dev@orkas.invalid>\nSection: devel\nPriority: optional\n"
        f"Installed-Size: {size_kb}\nDepends: {', '.join(depends(stage / 'opt' / 'orkas'))}\n"
        "Homepage: https://orkas.invalid\n"
        "Description: local-first desktop workspace for a team of AI agents\n"
        " Orkas runs agents on your machine with your own model keys or a local model server:\n"
        " they read and edit files, search, run commands in a sandbox and remember what matters.\n"
    )
    (control / "postinst").write_text(REFRESH)
    (control / "postrm").write_text(REFRESH + CLEAN)
    for script in ("postinst", "postrm"):
        (control / script).chmod(0o755)
    for path in stage.rglob("*"):  # a package's files are root's and world-readable, whatever the umask
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
    target = out / f"orkas_{version}_{arch}.deb"
    compression = ["-Znone"] if fast else ["-Zxz", "-z9"]
    subprocess.run(["dpkg-deb", "--root-owner-group", *compression, "--build", str(stage), str(target)], check=True)
    shutil.rmtree(stage)
    return target


def unbundle_system_libraries(internal: Path) -> list[str]:
    """Remove the bundle's top-level libraries that are a packaged system library, byte for byte; their names."""
    listed = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    system: dict[str, list[str]] = {}
    for name, path in re.findall(r"^\s*(\S+) \(.*\) => (/\S+)$", listed, re.MULTILINE):
        system.setdefault(name, []).append(path)
    removed = []
    for copy in sorted(internal.glob("lib*.so*")):
        if copy.is_symlink() or not copy.is_file():
            continue
        same = [p for p in system.get(copy.name, []) if filecmp.cmp(copy, p, shallow=False)]
        if same and _owner(same[0]):
            copy.unlink()
            removed.append(copy.name)
    return removed


def depends(folder: Path) -> list[str]:
    """The packages that hold the system libraries the bundle's binaries link against."""
    binaries = [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and _is_elf(p)]
    system: set[str] = set()
    for start in range(0, len(binaries), 200):
        listed = subprocess.run(
            ["ldd", *map(str, binaries[start : start + 200])], capture_output=True, text=True, check=False
        ).stdout
        for library in re.findall(r"=> (/\S+) \(0x", listed):
            if not Path(library).resolve().is_relative_to(folder.resolve()):
                system.add(library)
    packages = set(ALWAYS)
    for library in system:
        packages |= _owner(library)
    return sorted(packages)


def _owner(library: str) -> set[str]:
    real = str(Path(library).resolve())
    for candidate in dict.fromkeys((library, real, real.removeprefix("/usr"), "/usr" + real)):
        found = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True, check=False)
        if found.returncode == 0:
            return {line.split(":", 1)[0].strip() for line in found.stdout.splitlines() if ":" in line}
    return set()


def _is_elf(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == ELF


def _copyright() -> str:
    return (
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        "Upstream-Name: orkas\n\nFiles: *\nCopyright: the Orkas developers\nLicense: see /opt/orkas\n"
        "\nFiles: opt/orkas/_internal/orkas/phone/assets/fonts/cjk.ttf\n"
        "License: Apache-2.0 (Droid Sans Fallback; see NOTICE beside it)\n"
        "\nFiles: opt/orkas/_internal/orkas/phone/assets/fonts/notosanssymbols.ttf\n"
        "License: OFL-1.1 (Noto Sans Symbols; see NOTICE beside it)\n"
        "\nFiles: opt/orkas/_internal/PySide6/*\nLicense: LGPL-3.0 (Qt for Python)\n"
    )

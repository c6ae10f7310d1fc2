"""Build Orkas for a platform: one entry point for every installer.

    python build/build.py [--target linux|macos|windows] [--out DIR] [--fast] [--formats deb,tar]

Runs PyInstaller with build/orkas.spec (one folder: `orkas` and its `_internal/`), then packages it:
- linux: `orkas_VERSION_ARCH.deb` (build/deb.py) and a portable `orkas-VERSION-linux-ARCH.tar.gz`;
- macos: `Orkas.app` (Info.plist in the spec), signed and notarized when the environment holds the
  identity (ORKAS_MACOS_SIGN_IDENTITY; ORKAS_NOTARY_PROFILE for `notarytool`), then a .dmg
  (build/macos/dmg.sh);
- windows: the Inno Setup installer (build/windows/orkas.iss, Start-menu entry and uninstaller), signed
  when ORKAS_WINDOWS_SIGN_CERT (a .pfx) and ORKAS_WINDOWS_SIGN_PASSWORD are set.
On Linux the bundle's own ELF files lose their debug information, and faiss uses numpy's OpenBLAS
(build/one_blas.py). Each platform builds on itself (PyInstaller does not cross-compile). The version is
orkas.__version__.
`--fast` skips compression (the tests install what they build; the shipped .deb uses xz); `--formats`
picks the Linux packages (both by default).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"


def version() -> str:
    """orkas.__version__, read from its file (pyproject's `dynamic` version points at it)."""
    source = (ROOT / "app" / "orkas" / "__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]+)"$', source, re.MULTILINE)
    if found is None:
        raise SystemExit("build: app/orkas/__init__.py says no __version__")
    return found.group(1)


def this_platform() -> str:
    return {"Darwin": "macos", "Windows": "windows"}.get(platform.system(), "linux")


def bundle(target: str, out: Path) -> Path:
    """PyInstaller's one-folder build: OUT/bundle/orkas (OUT/bundle/Orkas.app on macOS)."""
    env = {**os.environ, "ORKAS_BUILD_TARGET": target, "ORKAS_VERSION": version()}
    if target == "linux":  # the Python modules stored, not deflated: the .deb's xz packs them 40% smaller than zlib
        env["PYINSTALLER_ZLIB_COMPRESSION_LEVEL"] = "0"
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN"]
    command += ["--distpath", str(out / "bundle"), "--workpath", str(out / "work"), str(BUILD / "orkas.spec")]
    subprocess.run(command, check=True, env=env, cwd=ROOT)
    return out / "bundle" / ("Orkas.app" if target == "macos" else "orkas")


def strip_debug(folder: Path) -> int:
    """Debug information out of the bundle's own ELF files (libpython alone carries 17 MB of it); symbol tables
    stay. Not in the wheels' `*.libs/` folders, whose libraries auditwheel rewrote: stripping one broke numpy's
    OpenBLAS ("ELF load command … not page-aligned"). Every stripped file must still load, or the build fails.
    Returns the bytes saved."""
    stripped: list[Path] = []
    before = 0
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file() or any(p.endswith(".libs") for p in path.parent.parts):
            continue
        with path.open("rb") as handle:
            if handle.read(4) != b"\x7fELF":
                continue
        sections = subprocess.run(["readelf", "-S", "-W", str(path)], capture_output=True, text=True).stdout
        if ".debug_" in sections:
            before += path.stat().st_size
            subprocess.run(["strip", "--strip-debug", str(path)], check=True)
            stripped.append(path)
    loads = "import ctypes, sys\nfor path in sys.argv[1:]: ctypes.CDLL(path)"
    internal = folder / "_internal"
    env = {**os.environ, "LD_LIBRARY_PATH": str(internal if internal.is_dir() else folder)}
    subprocess.run([sys.executable, "-c", loads, *map(str, stripped)], check=True, env=env)
    return before - sum(path.stat().st_size for path in stripped)


def tarball(folder: Path, out: Path, fast: bool) -> Path:
    """The portable Linux build: unpack anywhere, run `orkas-VERSION/orkas`."""
    name = f"orkas-{version()}"
    target = out / f"{name}-linux-{platform.machine()}.tar.gz"
    with tarfile.open(target, "w:gz", compresslevel=0 if fast else 6) as archive:  # fast: stored, for tests
        archive.add(folder, arcname=name)
        archive.add(BUILD / "linux" / "orkas.desktop", arcname=f"{name}/orkas.desktop")
        archive.add(ROOT / "icons" / "hicolor", arcname=f"{name}/icons/hicolor")
    return target


def sign_and_notarize_mac(app: Path, out: Path) -> Path:
    identity = os.environ.get("ORKAS_MACOS_SIGN_IDENTITY")
    if identity:  # the spec signed the binaries; the bundle as a whole, with the hardened runtime
        entitlements = BUILD / "macos" / "entitlements.plist"
        subprocess.run(
            ["codesign", "--force", "--deep", "--options", "runtime", "--timestamp", "--entitlements",
             str(entitlements), "--sign", identity, str(app)],
            check=True,
        )  # fmt: skip
    else:
        print("build: ORKAS_MACOS_SIGN_IDENTITY not set: the .app is unsigned")
    dmg = out / f"Orkas-{version()}-macos-{platform.machine()}.dmg"
    subprocess.run(["bash", str(BUILD / "macos" / "dmg.sh"), str(app), str(dmg)], check=True)
    profile = os.environ.get("ORKAS_NOTARY_PROFILE")
    if identity and profile:
        subprocess.run(["xcrun", "notarytool", "submit", str(dmg), "--keychain-profile", profile, "--wait"], check=True)
        subprocess.run(["xcrun", "stapler", "staple", str(dmg)], check=True)
    else:
        print("build: not notarized (needs ORKAS_MACOS_SIGN_IDENTITY and ORKAS_NOTARY_PROFILE)")
    return dmg


def windows_installer(folder: Path, out: Path) -> Path:
    sign = ["signtool", "sign", "/fd", "SHA256", "/tr", "http://timestamp.digicert.com", "/td", "SHA256"]
    cert, password = os.environ.get("ORKAS_WINDOWS_SIGN_CERT"), os.environ.get("ORKAS_WINDOWS_SIGN_PASSWORD")
    if cert:
        subprocess.run([*sign, "/f", cert, "/p", password or "", str(folder / "orkas.exe")], check=True)
    iscc = shutil.which("iscc") or r"C:\Program Files (x86)\Inno Setup 6\ISCC.exe"
    defines = [f"/DVersion={version()}", f"/DSource={folder}", f"/DOutput={out}", f"/DRoot={ROOT}"]
    subprocess.run([iscc, *defines, str(BUILD / "windows" / "orkas.iss")], check=True)
    setup = out / f"Orkas-{version()}-windows-setup.exe"
    if cert:
        subprocess.run([*sign, "/f", cert, "/p", password or "", str(setup)], check=True)
    else:
        print("build: ORKAS_WINDOWS_SIGN_CERT not set: the installer is unsigned")
    return setup


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", choices=("linux", "macos", "windows"), default=this_platform())
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    parser.add_argument("--fast", action="store_true", help="no compression (for tests)")
    parser.add_argument("--formats", default="deb,tar", help="Linux packages to make: deb, tar or both")
    args = parser.parse_args(argv)
    if args.target != this_platform():
        parser.error(f"a {args.target} build runs on {args.target} (this is {this_platform()}): see .github/workflows")
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    folder = bundle(args.target, out)
    made: list[Path] = []
    if args.target == "linux":
        print(f"build: debug information stripped: {strip_debug(folder) / 1e6:.1f} MB")
        sys.path.insert(0, str(BUILD))
        from deb import build_deb

        formats = set(args.formats.split(","))
        if formats - {"deb", "tar"}:
            parser.error(f"--formats: deb and/or tar, not {args.formats}")
        if "deb" in formats:
            made.append(build_deb(folder, out, version(), fast=args.fast))
        if "tar" in formats:
            made.append(tarball(folder, out, args.fast))
    elif args.target == "macos":
        made.append(sign_and_notarize_mac(folder, out))
    else:
        made.append(windows_installer(folder, out))
    for path in made:
        print(f"build: {path} ({path.stat().st_size / 1e6:.1f} MB)")
    print(f"build: done in {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

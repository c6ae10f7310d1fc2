"""Before Qt starts on Linux: are the system libraries the window needs there? Without one, Qt aborts
with a page about platform plugins; the person needs one line naming what to install.

Qt and Chromium ship inside PySide6 (and the installed app); these come from the system. The .deb
depends on them; a source checkout or the portable tar.gz may lack one.
"""

from __future__ import annotations

import ctypes
import sys

# soname → the Debian/Ubuntu package that holds it
NEEDED = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libEGL.so.1": "libegl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libnss3.so": "libnss3",
    "libasound.so.2": "libasound2",
    "libXcomposite.so.1": "libxcomposite1",
    "libXdamage.so.1": "libxdamage1",
    "libXrandr.so.2": "libxrandr2",
    "libXtst.so.6": "libxtst6",
    "libxkbfile.so.1": "libxkbfile1",
}


def missing_libraries(needed: dict[str, str] = NEEDED) -> list[tuple[str, str]]:
    """(soname, package) for each library that cannot be loaded, on Linux; nothing elsewhere."""
    if not sys.platform.startswith("linux"):
        return []
    missing = []
    for soname, package in needed.items():
        try:
            ctypes.CDLL(soname)
        except OSError:
            missing.append((soname, package))
    return missing


def advice(missing: list[tuple[str, str]]) -> str:
    names = ", ".join(soname for soname, _ in missing)
    packages = " ".join(dict.fromkeys(package for _, package in missing))
    return (
        f"the window needs system libraries that are missing ({names}): install them "
        f"(Debian/Ubuntu: sudo apt install {packages}), or run `orkas serve` and open its URL in a browser"
    )

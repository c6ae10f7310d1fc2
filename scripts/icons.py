"""Render icons/orkas.svg into every icon the app and its installers need; the results are committed, so a
build needs no renderer (the app never renders SVG at run time).

- `icons/hicolor/NxN/apps/orkas.png`, 16 to 1024: the Linux icon theme set (the .deb installs it), the
  window icon (256) and the sources of the two below;
- `icons/orkas.ico` (16–256, PNG entries: Windows' exe, installer and shortcuts);
- `icons/orkas.icns` (16–1024 with the @2x kinds: the macOS .app);
- the phone view's web-manifest, home-screen and favicon PNGs under `app/orkas/phone/assets/`.

Run after the SVG changes: `.venv/bin/python scripts/icons.py`. Uses Qt's SVG renderer, already a
dependency of the desktop window; .ico and .icns are plain containers of PNGs, written here.
"""

from __future__ import annotations

import io
import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "icons"
SOURCE = ICONS / "orkas.svg"
SIZES = (16, 22, 24, 32, 48, 64, 96, 128, 256, 512, 1024)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# The .icns kinds that hold PNG data, by the pixel size each one is.
ICNS_KINDS = (
    (b"icp4", 16), (b"icp5", 32), (b"icp6", 64), (b"ic07", 128), (b"ic08", 256), (b"ic09", 512),
    (b"ic10", 1024), (b"ic11", 32), (b"ic12", 64), (b"ic13", 256), (b"ic14", 512),
)  # fmt: skip
PHONE = ROOT / "app" / "orkas" / "phone" / "assets"
BACKGROUND = "#2f6fed"  # the SVG's own rounded square: a maskable icon fills its whole square with it


def render(size: int, target: Path, *, maskable: bool = False) -> None:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(QColor(BACKGROUND) if maskable else Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    inset = size * 0.1 if maskable else 0.0  # a maskable icon keeps its drawing inside the safe zone
    QSvgRenderer(str(SOURCE)).render(painter, QRectF(inset, inset, size - 2 * inset, size - 2 * inset))
    painter.end()
    target.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(target)):
        sys.exit(f"could not write {target}")


def hicolor(size: int) -> Path:
    return ICONS / "hicolor" / f"{size}x{size}" / "apps" / "orkas.png"


def write_ico(target: Path) -> None:
    """ICO with PNG entries (Windows Vista and later read them): a directory, then the images."""
    images = [hicolor(size).read_bytes() for size in ICO_SIZES]
    out = io.BytesIO()
    out.write(struct.pack("<HHH", 0, 1, len(images)))
    offset = 6 + 16 * len(images)
    for size, data in zip(ICO_SIZES, images, strict=True):
        side = 0 if size >= 256 else size  # 0 means 256 in a directory entry
        out.write(struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset))
        offset += len(data)
    for data in images:
        out.write(data)
    target.write_bytes(out.getvalue())


def write_icns(target: Path) -> None:
    """ICNS: 'icns', the file's length, then (kind, length, PNG) for each size."""
    body = b"".join(
        kind + struct.pack(">I", 8 + len(data)) + data
        for kind, size in ICNS_KINDS
        for data in (hicolor(size).read_bytes(),)
    )
    target.write_bytes(b"icns" + struct.pack(">I", 8 + len(body)) + body)


def main() -> None:
    QGuiApplication(sys.argv)
    for size in SIZES:
        render(size, hicolor(size))
    write_ico(ICONS / "orkas.ico")
    write_icns(ICONS / "orkas.icns")
    for size in (192, 512):
        render(size, PHONE / "icons" / f"icon-{size}.png")
        render(size, PHONE / "icons" / f"icon-maskable-{size}.png", maskable=True)
    render(192, PHONE / "icons" / "apple-touch-icon-192.png", maskable=True)
    render(192, PHONE / "icons" / "loading-animation.png")
    render(64, PHONE / "favicon.png")
    print(f"icons written under {ICONS} and {PHONE}")


if __name__ == "__main__":
    main()

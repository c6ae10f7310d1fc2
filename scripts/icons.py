"""Render icons/orkas.svg to the PNGs the phone view's web manifest and home-screen install need.

Run once after the SVG changes: `.venv/bin/python scripts/icons.py`. The PNGs are committed (the app
never renders SVG at run time). Uses Qt's SVG renderer, already a dependency of the desktop window.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "icons" / "orkas.svg"
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


def main() -> None:
    QGuiApplication(sys.argv)
    for size in (192, 512):
        render(size, PHONE / "icons" / f"icon-{size}.png")
        render(size, PHONE / "icons" / f"icon-maskable-{size}.png", maskable=True)
    render(192, PHONE / "icons" / "apple-touch-icon-192.png", maskable=True)
    render(192, PHONE / "icons" / "loading-animation.png")
    render(64, PHONE / "favicon.png")
    print(f"icons written under {PHONE}")


if __name__ == "__main__":
    main()

"""The committed icons are what every platform reads: each PNG its size, the .ico and .icns well formed
(parsed here by their layouts, each image decoded by Qt), so a build needs no renderer."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from PySide6.QtGui import QImage  # decoding needs no display and no application object

ICONS = Path(__file__).resolve().parents[2] / "icons"
PNG = b"\x89PNG\r\n\x1a\n"


def side(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG)
    image = QImage.fromData(data, "PNG")
    assert not image.isNull()
    return image.width(), image.height()


@pytest.mark.parametrize("size", [16, 22, 24, 32, 48, 64, 96, 128, 256, 512, 1024])
def test_the_hicolor_set_has_every_size(size: int) -> None:
    png = ICONS / "hicolor" / f"{size}x{size}" / "apps" / "orkas.png"
    assert side(png.read_bytes()) == (size, size)


def test_the_ico_holds_each_windows_size_as_png() -> None:
    data = (ICONS / "orkas.ico").read_bytes()
    reserved, kind, count = struct.unpack_from("<HHH", data)
    assert (reserved, kind) == (0, 1) and count == 7
    sizes = []
    for index in range(count):
        width, height, _, _, planes, bits, length, offset = struct.unpack_from("<BBBBHHII", data, 6 + 16 * index)
        assert planes == 1 and bits == 32
        shown = width or 256
        assert side(data[offset : offset + length]) == (shown, height or 256)
        sizes.append(shown)
    assert sizes == [16, 24, 32, 48, 64, 128, 256]


def test_the_icns_holds_every_mac_size() -> None:
    data = (ICONS / "orkas.icns").read_bytes()
    assert data[:4] == b"icns" and struct.unpack_from(">I", data, 4)[0] == len(data)
    kinds: dict[bytes, tuple[int, int]] = {}
    at = 8
    while at < len(data):
        kind, length = data[at : at + 4], struct.unpack_from(">I", data, at + 4)[0]
        kinds[kind] = side(data[at + 8 : at + length])
        at += length
    assert at == len(data)
    assert kinds[b"icp4"] == (16, 16) and kinds[b"ic07"] == (128, 128) and kinds[b"ic10"] == (1024, 1024)
    assert kinds[b"ic14"] == (512, 512) and len(kinds) == 11

"""Flet's web client, served with nothing fetched from outside this computer, and its symbols drawn.

Its compiled Flutter app loads Rive's animation runtime from a CDN at start (we draw no Rive animation): the
page's Content-Security-Policy blocked it, but the attempt still told the network the phone was using Orkas
and filled the console with errors. The app's two builds (`main.dart.js`, `main.dart.wasm`) are served with that
address swapped, byte for byte the same length, for a path here, where a stub answers: the runtime is never
ready, as when the CDN was blocked, and nothing leaves.

The page runs one renderer, CanvasKit (app.py), in one build: the full one every browser runs. Flutter's loader
would pick a smaller build of it for Chrome (`canvaskit/chromium/`), which the Linux bundle does not carry:
its bootstrap script is served asking for the full build.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import flet_web

CDN = b"https://cdn.jsdelivr.net/npm/@rive-app/flutter-native-wasm@44.0.0/"
_STEM = b"rive-runtime-not-fetched"
LOCAL = _STEM + b"-" * (len(CDN) - len(_STEM) - 1) + b"/"  # relative: under /m/, same length as CDN
STUB = b"window.RiveNative = function () { return new Promise(function () {}); };\n"
BUILDS = {"main.dart.js": "application/javascript", "main.dart.wasm": "application/wasm"}
BOOTSTRAP = "flutter_bootstrap.js"
FULL_CANVASKIT = (b"var flutterConfig = {", b'var flutterConfig = {canvasKitVariant: "full", ')
WEB = Path(flet_web.__file__).parent / "web"
# Fallback fonts the engine asks for by Google's subset names (assets/fonts/<family>/v43/<hash>.woff2): each
# family answered with the whole font we ship (its bytes are read for what they are, not by the name).
SYMBOLS = Path(__file__).parent / "assets" / "fonts" / "notosanssymbols.ttf"
# A phone in Chinese asks "Noto Sans SC" for what the shipped CJK font (cjk.ttf) lacks — the arrows of
# "设置 → 手机" were boxes: the symbols font answers (its Chinese is cjk.ttf's own).
FONTS = {"notosanssymbols": SYMBOLS, "notosanssc": SYMBOLS}


@functools.cache
def patched(name: str) -> bytes:
    """One of the app's builds with the CDN's address swapped for ours (the same length: offsets hold)."""
    return (WEB / name).read_bytes().replace(CDN, LOCAL)


@functools.cache
def bootstrap() -> bytes:
    """Flutter's bootstrap script, asking for the full CanvasKit build (every browser's)."""
    script = (WEB / BOOTSTRAP).read_bytes()
    if FULL_CANVASKIT[0] not in script:
        raise RuntimeError(f"{BOOTSTRAP} no longer says {FULL_CANVASKIT[0]!r}: Flet changed its web client")
    return script.replace(FULL_CANVASKIT[0], FULL_CANVASKIT[1], 1)


class NoCdn:
    """ASGI layer: the app's builds, patched; the stub under LOCAL; everything else as Flet serves it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        name = path.rsplit("/", 1)[-1]
        if name in BUILDS and (WEB / name).is_file():
            await answer(send, patched(name), BUILDS[name])
        elif name == BOOTSTRAP:
            await answer(send, bootstrap(), "application/javascript")
        elif f"/{LOCAL.decode()}" in path and name.endswith(".js"):
            await answer(send, STUB, "application/javascript")
        elif (font := _font(path)) is not None:
            await answer(send, _read(font), "font/ttf")
        else:
            await self.app(scope, receive, send)


def _font(path: str) -> Path | None:
    family, inside, _ = path.partition("/assets/fonts/")[2].partition("/")  # <family>/<its subset file>
    return FONTS.get(family) if inside else None


@functools.cache
def _read(path: Path) -> bytes:
    return path.read_bytes()


async def answer(send: Any, body: bytes, media_type: str) -> None:
    """An ASGI response of `body`, whole."""
    headers = [(b"content-type", media_type.encode()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})

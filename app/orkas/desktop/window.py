"""The desktop window: pywebview on Qt (the backend where dropped files arrive with their real paths).

The server runs on a background thread; the GUI loop must own the main thread. A drop anywhere on the
page reaches `_on_drop` with `pywebviewFullPath` on each file; the paths go to the page
(`window.orkasDropped`), which attaches them to the open conversation through the bridge.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from orkas.desktop.bridge import Bridge

log = logging.getLogger(__name__)


def prepare_qt_environment(env: dict[str, str]) -> None:
    """QtWebEngine refuses to start as root unless its sandbox is off (CI and containers run as root)."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")


def open_window(
    url: str,
    bridge: Bridge,
    *,
    on_shown: Callable[[Any], None] | None = None,
    gui: Literal["qt", "gtk"] = "qt",
) -> None:
    """Show the window and run the GUI loop until it is closed (blocks the calling, main, thread)."""
    import webview
    from webview.dom import DOMEventHandler

    created = webview.create_window(
        "Orkas", url, js_api=bridge, width=1200, height=820, min_size=(640, 480), text_select=True
    )
    if created is None:
        raise RuntimeError("pywebview could not create the window")
    window: Any = created  # pywebview's own annotations are looser than its behaviour
    bridge._window = window

    def on_drop(event: dict[str, Any]) -> None:
        files = event.get("dataTransfer", {}).get("files", [])
        paths = [f["pywebviewFullPath"] for f in files if f.get("pywebviewFullPath")]
        if not paths:
            return
        bridge._dropped.append(paths)
        window.evaluate_js(f"window.orkasDropped && window.orkasDropped({json.dumps(paths)})")

    def on_loaded() -> None:  # every load (a reload too) needs the handler again
        window.dom.document.on("drop", DOMEventHandler(on_drop, prevent_default=True))
        if on_shown is not None:
            on_shown(window)

    window.events.loaded += on_loaded
    webview.start(gui=gui, private_mode=True, icon=str(_icon()))


def _icon() -> Path:
    return Path(__file__).resolve().parents[3] / "icons" / "orkas.svg"

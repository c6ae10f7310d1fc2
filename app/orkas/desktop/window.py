"""The desktop window: pywebview on Qt (the backend where dropped files arrive with their real paths).

The server runs on a background thread; the GUI loop must own the main thread. A drop anywhere on the
page reaches `_on_drop` with `pywebviewFullPath` on each file; the paths go to the page
(`window.orkasDropped`), which attaches them to the open conversation through the bridge.
"""

from __future__ import annotations

import html
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from orkas.core.resources import window_icon
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
    server_ready: Callable[[], object] = lambda: None,  # blocks until served; returns a problem or None
    on_splash: Callable[[Any], None] | None = None,
    on_shown: Callable[[Any], None] | None = None,
    gui: Literal["qt", "gtk"] = "qt",
) -> None:
    """Show the window and run the GUI loop until it is closed (blocks the calling, main, thread).

    The window paints the app's frame at once (`SPLASH`, no server needed) and moves to `url` when
    `server_ready()` returns, so start-up shows something as soon as Qt is up."""
    import webview
    from webview.dom import DOMEventHandler

    created = webview.create_window(
        "Orkas", html=SPLASH, js_api=bridge, width=1200, height=820, min_size=(640, 480), text_select=True
    )
    if created is None:
        raise RuntimeError("pywebview could not create the window")
    window: Any = created  # pywebview's own annotations are looser than its behaviour
    bridge._window = window

    def on_drop(event: dict[str, Any]) -> None:
        files = event.get("dataTransfer", {}).get("files", [])
        paths = [f["pywebviewFullPath"] for f in files if f.get("pywebviewFullPath")]
        # Sent even when there are none: a part of the page that took the drop waits for them (frontend/js/drops.js)
        window.evaluate_js(f"window.orkasDropped && window.orkasDropped({json.dumps(paths)})")

    splash = True

    def on_loaded() -> None:
        nonlocal splash
        if splash:  # the frame is painted: go to the app when its server answers
            splash = False
            if on_splash is not None:
                on_splash(window)
            problem = server_ready()
            if problem:
                escaped = html.escape(str(problem))
                window.load_html(f"<p style='font: 15px system-ui; padding: 2em'>Orkas could not start: {escaped}</p>")
            else:
                window.load_url(url)
            return
        # every load of the app (a reload too) needs the drop handler again
        window.dom.document.on("drop", DOMEventHandler(on_drop, prevent_default=True))
        if on_shown is not None:
            on_shown(window)

    window.events.loaded += on_loaded
    webview.start(gui=gui, private_mode=True, icon=str(_icon()))


# The app's frame (sidebar, header, composer) in its own colours: what the window paints while the
# in-process server starts. Nothing here needs the server or the network.
SPLASH = """<!doctype html><html><head><meta charset="utf-8"><style>
:root { --bg: #f7f7f8; --panel: #fff; --line: #e3e4e8; --text: #1c1d21; --accent: #2f6fed; }
@media (prefers-color-scheme: dark) { :root { --bg: #16171b; --panel: #1e1f24; --line: #30323a; --text: #e7e8ec; } }
html, body { margin: 0; height: 100%; background: var(--bg); color: var(--text);
  font: 15px/1.55 system-ui, "Noto Sans", "Noto Sans CJK SC", "WenQuanYi Micro Hei", sans-serif; }
body { display: grid; grid-template-columns: 260px 1fr; }
aside { background: var(--panel); border-right: 1px solid var(--line); padding: 14px; }
b { display: block; font-size: 17px; margin-bottom: 14px; }
i { display: block; height: 34px; border-radius: 8px; background: var(--accent); opacity: .9; }
main { display: flex; flex-direction: column; }
header { height: 56px; border-bottom: 1px solid var(--line); }
footer { margin-top: auto; height: 76px; border-top: 1px solid var(--line); }
</style></head><body><aside><b>Orkas</b><i></i></aside><main><header></header><footer></footer></main></body></html>"""


def _icon() -> Path:
    return window_icon()  # a PNG: the bundle carries no SVG image plugin

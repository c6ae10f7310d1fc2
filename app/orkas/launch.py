"""Launching the desktop app fast: the window starts on the main thread first and paints the app's
frame; then the server is imported, built and started on a background thread, and the window moves
to the app. Starting both at once was slower: their imports competed for the one interpreter lock.
The socket is bound at once (no heavy imports), so the URL is known before anything else starts.
"""

from __future__ import annotations

import ctypes
import json
import logging
import sys
import threading
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from orkas.core.logging import since_start

log = logging.getLogger(__name__)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8  # mallopt's parameter numbers (glibc malloc.h)

# The page reports its paint timings and proves the bridge both ways (for tests and bench/desktop.py).
PROBE = """
window.pywebview.api.ping().then((ping) => new Promise((resolve) => {
  const ready = () => {
    if (!document.body.dataset.ready) return setTimeout(ready, 10);
    const paint = performance.getEntriesByName("first-contentful-paint")[0];
    resolve({ping, time_origin: performance.timeOrigin, first_paint: paint ? paint.startTime : null,
             ready: performance.now()});
  };
  ready();
}))
"""

SPLASH_PROBE = """
new Promise((resolve) => {
  const painted = () => {
    const paint = performance.getEntriesByName("first-contentful-paint")[0];
    if (!paint) return setTimeout(painted, 10);
    resolve({time_origin: performance.timeOrigin, first_paint: paint.startTime});
  };
  painted();
})
"""


def tune_malloc() -> bool:
    """The window's process holds less idle memory with glibc's malloc told three things, before its threads start
    (bench/idle_memory.py, 2026-12-06: ~15 MB PSS for the thresholds, ~7 MB for the arenas):

    - two arenas: each thread that allocates gets its own, up to eight per core, and the process runs ~40 (Qt's
      and the web engine's among them); idle, their half-empty arenas are held;
    - the mmap and trim thresholds kept at their starting 128 KiB: left alone, glibc raises both each time a large
      block is freed (up to 32 and 64 MiB), and from then on keeps that much freed memory instead of returning it.
      The cost is a system call for each block over 128 KiB, which a window that mostly waits does not feel.

    True when applied; elsewhere than glibc there is nothing to tell."""
    if sys.platform != "linux":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        settings = ((M_ARENA_MAX, 2), (M_MMAP_THRESHOLD, 128 * 1024), (M_TRIM_THRESHOLD, 128 * 1024))
        return all(libc.mallopt(option, value) == 1 for option, value in settings)
    except (OSError, AttributeError):  # another C library (musl has no mallopt to call)
        log.debug("mallopt is not available here")
        return False


def run_desktop(env: Mapping[str, str], *, report: Path | None = None) -> int:
    """`orkas`: the window on this thread until it is closed. `report` (tests, benchmarks) receives one
    JSON line per window event: shown (with the bridge's answer and paint timings), attached."""
    from orkas.core.net import bind_local
    from orkas.desktop.bridge import Bridge
    from orkas.desktop.window import open_window

    tune_malloc()
    bound = bind_local()
    ready = threading.Event()
    state: dict[str, Any] = {}

    def serve() -> None:
        from orkas.app import settings_from_env
        from orkas.host import host

        try:
            settings = settings_from_env(env)
            hosted = host(settings, bound=bound)
            hosted.services.restart = lambda: bridge._window.destroy()  # to start an installed update
            state.update(hosted=hosted, settings=settings)
        except Exception as e:  # the window says why instead of staying on its frame
            state["error"] = f"{type(e).__name__}: {e}"
            raise
        finally:
            ready.set()
        hosted.serve_forever()

    def server_ready() -> str | None:
        """Called once the window has painted its frame: only then start importing the server, so
        the two never compete for the interpreter while Qt starts (that made both slower)."""
        threading.Thread(target=serve, name="orkas-server", daemon=True).start()
        ready.wait()
        return state.get("error")

    def write(record: dict[str, Any]) -> None:
        if report is not None:
            with report.open("a") as out:
                out.write(json.dumps(record) + "\n")

    def attach(conversation_id: str, path: Path) -> dict[str, Any]:
        from orkas.app import protected_data

        ready.wait()
        hosted, settings = state["hosted"], state["settings"]
        conversation = hosted.runtime.store.get(conversation_id)
        policy = hosted.runtime.store.policy(
            conversation,
            protected=tuple(protected_data(settings.data_dir)),
            own=(hosted.services.attachments.folder(conversation_id),),
        )
        record = asdict(hosted.services.attachments.add_path(conversation, path, policy))
        write({"event": "attached", "conversation": conversation_id, "paths": [str(path)], "results": [record]})
        return record

    def on_splash(window: Any) -> None:
        if report is not None:
            window.evaluate_js(SPLASH_PROBE, lambda answer: write({"event": "splash", **answer}))

    def on_shown(window: Any) -> None:
        log.info("window shown after %.0f ms", since_start() * 1000)
        if report is not None:
            window.evaluate_js(PROBE, lambda answer: write({"event": "shown", **answer}))

    bridge = Bridge(attach)
    try:
        open_window(
            bound[2],
            bridge,
            server_ready=server_ready,
            on_splash=on_splash,
            on_shown=on_shown,
        )
    finally:
        if "hosted" in state:
            state["hosted"].stop()
    if "hosted" in state:
        state["hosted"].restart_if_installing([], env)  # the window was closed to install an update
    return 0

"""What the page in the desktop window may ask of Python directly (`window.pywebview.api.*`).

Only things a browser cannot do: the real paths of dropped files, a native folder picker, opening a
link in the system browser. pywebview exposes every public attribute of this object to the page, so
everything else lives in underscore names.
"""

from __future__ import annotations

import logging
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orkas import __version__

log = logging.getLogger(__name__)
Attach = Callable[[str, Path], dict[str, Any]]  # (conversation id, real path) -> attachment record
EXTERNAL = ("http://", "https://", "mailto:")


class Bridge:
    def __init__(self, attach: Attach, open_url: Callable[[str], object] = webbrowser.open) -> None:
        self._attach = attach
        self._open_url = open_url
        self._window: Any = None

    def ping(self) -> dict[str, Any]:
        return {"ok": True, "version": __version__}

    def attach_paths(self, conversation_id: str, paths: list[str]) -> list[dict[str, Any]]:
        """Attach dropped files by their real paths; each result is a record or {"error": why}."""
        results: list[dict[str, Any]] = []
        for raw in paths[:20]:
            try:
                results.append(self._attach(conversation_id, Path(raw)))
            except Exception as e:
                log.info("attaching %s failed: %s", raw, e)
                results.append({"error": f"{Path(raw).name}: {e}"})
        return results

    def pick_folder(self) -> str | None:
        if self._window is None:
            return None
        import webview

        chosen = self._window.create_file_dialog(webview.FileDialog.FOLDER)
        return str(chosen[0]) if chosen else None

    def open_external(self, url: str) -> bool:
        if not isinstance(url, str) or not url.lower().startswith(EXTERNAL):
            return False
        self._open_url(url)
        return True

    def open_folder(self, path: str) -> bool:
        """Show a folder (a skill's) in the file manager. Only an existing folder, never a file: opening a
        file could run it."""
        if not isinstance(path, str) or "\0" in path:
            return False
        folder = Path(path)
        if not folder.is_absolute() or folder.is_symlink() or not folder.is_dir():
            return False
        self._open_url(folder.resolve().as_uri())
        return True

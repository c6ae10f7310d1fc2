"""Folders the knowledge base follows (`<kb>/watched.json`): each re-indexed a moment after its last change —
many events for one save (a temp file, a rename, a modify) become one re-index (watchdog, debounced)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orkas.core.fsutil import atomic_write

log = logging.getLogger(__name__)
DEBOUNCE_SECONDS = 1.0


class WatchedFolders:
    def __init__(self, folder: Path, reindex: Callable[[Path], None]) -> None:
        self.folder = folder  # the knowledge base's own folder, where the list is kept
        self.reindex = reindex
        self._observer: Any = None
        self._timers: dict[str, threading.Timer] = {}
        self._watches: dict[str, Any] = {}  # folder → watchdog's handle, to unschedule it

    def listed(self) -> list[str]:
        path = self.folder / "watched.json"
        if not path.exists():
            return []
        try:
            return [str(p) for p in json.loads(path.read_text())]
        except ValueError:
            return []

    def remember(self, folder: Path) -> None:
        folders = self.listed()
        if str(folder) not in folders:
            folders.append(str(folder))
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write(self.folder / "watched.json", json.dumps(folders).encode())

    def unwatch(self, folder: str) -> bool:
        """Stop following the folder's changes (what was indexed from it stays); False if not watched."""
        folders = self.listed()
        if folder not in folders:
            return False
        atomic_write(self.folder / "watched.json", json.dumps([f for f in folders if f != folder]).encode())
        watch = self._watches.pop(folder, None)
        if watch is not None and self._observer is not None:
            self._observer.unschedule(watch)
        if (timer := self._timers.pop(folder, None)) is not None:
            timer.cancel()
        log.info("stopped watching %s", folder)
        return True

    def watch(self, folder: Path) -> None:
        if not folder.is_dir():
            return
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        debounced = self._debounced

        class Changed(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in ("created", "modified", "deleted", "moved"):
                    debounced(folder)

        if self._observer is None:
            self._observer = Observer()
            self._observer.daemon = True
            self._observer.start()
        self._watches[str(folder)] = self._observer.schedule(Changed(), str(folder), recursive=True)
        log.info("watching %s for changes", folder)

    def _debounced(self, folder: Path) -> None:
        key = str(folder)
        if (timer := self._timers.get(key)) is not None:
            timer.cancel()
        timer = threading.Timer(DEBOUNCE_SECONDS, self.reindex, args=(folder,))
        timer.daemon = True
        self._timers[key] = timer
        timer.start()

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
        for timer in self._timers.values():
            timer.cancel()

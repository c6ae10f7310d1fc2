"""Watching the skill roots with watchdog (inotify, FSEvents, ReadDirectoryChanges): a skill added, edited,
renamed or removed shows in the running app within about a second, without a restart.

Every existing root is watched recursively. A root that does not exist yet (the person installs Claude
Code next week) is covered by watching its nearest existing parent, without recursion: when the folder
appears, the watches are planned again. Events are debounced (a save is several events) and each burst
ends in one rescan of the registry, which parses only the SKILL.md files that changed.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from orkas.adapter.skills.roots import SkillRegistry

log = logging.getLogger(__name__)

DEBOUNCE = 0.25  # seconds after the last event of a burst


class SkillWatcher:
    def __init__(self, registry: SkillRegistry, debounce: float = DEBOUNCE) -> None:
        self.registry = registry
        self.debounce = debounce
        self._observer: Any = None
        self._watches: dict[tuple[str, bool], Any] = {}  # (folder, recursive) → watchdog's handle
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._missing: list[Path] = []  # roots that do not exist yet
        self._closed = False
        self.rescans = 0

    def start(self) -> None:
        from watchdog.observers import Observer

        self._observer = Observer()
        self._observer.daemon = True
        self._observer.start()
        self._plan()

    def _wanted(self) -> set[tuple[str, bool]]:
        wanted: set[tuple[str, bool]] = set()
        self._missing = []
        for root in self.registry.roots():
            if root.tier == "bundled" or not root.enabled:
                continue  # shipped files change only with the app
            path = root.path
            if path.is_dir():
                wanted.add((str(path), True))
                continue
            parent = path.parent
            while not parent.is_dir() and parent != parent.parent:
                parent = parent.parent
            wanted.add((str(parent), False))  # tells us when the root (or a folder on its way) appears
            self._missing.append(path)
        return wanted

    def _plan(self) -> None:
        """Watch what exists now; forget watches no longer needed."""
        from watchdog.events import FileSystemEvent, FileSystemEventHandler

        watcher = self

        class Changed(FileSystemEventHandler):
            def __init__(self, recursive: bool) -> None:
                self.recursive = recursive

            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type not in ("created", "modified", "deleted", "moved", "closed"):
                    return
                # A parent watched for a root still to come (~/.claude, busy with Claude Code's own files):
                # only a folder on the way to that root matters.
                if self.recursive:
                    watcher._changed()
                elif event.event_type in ("created", "moved", "deleted") and watcher._on_the_way(
                    event.src_path, getattr(event, "dest_path", "")
                ):
                    watcher._changed()

        with self._lock:
            if self._closed or self._observer is None:
                return
            wanted = self._wanted()
            for key in set(self._watches) - wanted:
                try:
                    self._observer.unschedule(self._watches.pop(key))
                except (KeyError, OSError):
                    pass
            new = wanted - set(self._watches)
            for key in new:
                folder, recursive = key
                try:
                    self._watches[key] = self._observer.schedule(Changed(recursive), folder, recursive=recursive)
                except OSError as e:  # out of inotify watches, a folder gone in between: the next event retries
                    log.warning("cannot watch %s for skills: %s", folder, e.strerror or e)
            # A folder on the way to a root made while these watches were being set (`mkdir -p` under load)
            # raised its event before anything watched it: look again, or that root is missed for good.
            # And a root just come into being (`mkdir -p …/skills/haiku` then its SKILL.md) may have got its
            # files between our last look and this watch: one more look after the burst settles.
            if self._wanted() != wanted or any(recursive for _folder, recursive in new):
                self._changed_locked()

    def _on_the_way(self, *paths: str | bytes) -> bool:
        for raw in paths:
            if not raw:
                continue
            path = Path(os.fsdecode(raw))
            if any(path == missing or path in missing.parents for missing in self._missing):
                return True
        return False

    def _changed(self) -> None:
        with self._lock:
            self._changed_locked()

    def _changed_locked(self) -> None:
        if self._closed:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(self.debounce, self._rescan)
        self._timer.daemon = True
        self._timer.start()

    def _rescan(self) -> None:
        try:
            self._plan()  # a root may have appeared (or gone)
            self.registry.refresh()
            self.rescans += 1
        except Exception:  # a rescan must never stop the watcher; the next change tries again
            log.exception("rescanning skills failed")

    def watched(self) -> list[str]:
        with self._lock:
            return sorted(folder for folder, _recursive in self._watches)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(5)


def watch(registry: SkillRegistry) -> SkillWatcher:
    watcher = SkillWatcher(registry)
    watcher.start()
    return watcher

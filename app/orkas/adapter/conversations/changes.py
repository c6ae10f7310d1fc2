"""Which chats changed on disk since the sidebar's search last asked, told by the kernel instead of looked for.

Checking each of 1,000 chats' two files before every search took ~10 ms of a 16–25 ms search, and more under load
(issue 38). A chat changes through this process (a run, a rename) or through another one writing the same folder
(`orkas run --session ID` in a terminal), so the news has to come from the files themselves, not from our writers.
On Linux, inotify watches the conversations folder and each chat's folder; `take()` reads what the kernel queued
without waiting. A write that returned before `take()` is in that queue, so a search never misses it — no delay,
no thread, no timer. Where there is no inotify (macOS, Windows), or the watches run out, or the kernel's queue
overflowed, `take()` answers None: look at every chat, as before.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
import weakref
from pathlib import Path

_MODIFY, _ATTRIB, _MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x2, 0x4, 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF, _OVERFLOW, _IGNORED, _ONLYDIR = 0x400, 0x800, 0x4000, 0x8000, 0x1000000
_IN_CHAT = _MODIFY | _ATTRIB | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE | _DELETE_SELF | _MOVE_SELF | _ONLYDIR
_IN_ROOT = _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE | _ONLYDIR
_NONBLOCK, _CLOEXEC = os.O_NONBLOCK, 0o2000000
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name, padded)


class ChatChanges:
    """The chat folders (by id) with anything made, written, renamed or removed in them since the last `take`."""

    def __init__(self, root: Path, fd: int, libc: ctypes.CDLL) -> None:
        self.root = root
        self._fd = fd
        self._libc = libc
        self._chats: dict[int, str] = {}  # watch descriptor -> chat id ("" for the root)
        self._lost = False  # a watch could not be added, or the queue overflowed: nothing can be told
        weakref.finalize(self, os.close, fd)

    @classmethod
    def open(cls, root: Path) -> ChatChanges | None:
        """Watching `root` (the conversations folder), or None where that cannot be done here."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)  # the C library this process has loaded
            fd = libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        changes = cls(root, fd, libc)
        if not changes._add(root, ""):
            return None
        return changes

    def watch(self, chat_id: str) -> None:
        """Follow this chat's folder too (idempotent). A chat made after `open` is followed by itself."""
        self._add(self.root / chat_id, chat_id)

    def take(self) -> set[str] | None:
        """The chats changed since the last call (a new or removed chat too); None when that is not known — the
        caller looks at every chat then, and calls `watch` for each."""
        changed: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                break
            self._read(data, changed)
        lost, self._lost = self._lost, False
        return None if lost else changed

    def _read(self, data: bytes, changed: set[str]) -> None:
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
            name = data[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0").decode(errors="surrogateescape")
            at += _EVENT.size + size
            if mask & _OVERFLOW:
                self._lost = True
                continue
            chat = self._chats.get(wd)
            if mask & _IGNORED:
                self._chats.pop(wd, None)
            if chat == "" and name:  # in the conversations folder: a chat made, removed or moved in or out
                changed.add(name)
                if mask & (_CREATE | _MOVED_TO):
                    self.watch(name)
            elif chat:
                changed.add(chat)

    def _add(self, folder: Path, chat_id: str) -> bool:
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(folder), _IN_ROOT if not chat_id else _IN_CHAT)
        if wd >= 0:
            self._chats[wd] = chat_id
            return True
        if ctypes.get_errno() not in (2, 20):  # ENOENT, ENOTDIR: gone already, or not a chat's folder
            self._lost = True  # out of watches (ENOSPC): keep looking at every chat
        return False

"""One logging set-up for every process of the app (window, server, CLI runs).

- A file per day under `<data>/logs/` (`orkas-2026-12-01.log`, then `.1.log`, `.2.log` … past
  10 MB), all processes appending to the same file: each record is one `write` on a descriptor opened
  with O_APPEND, so lines of two processes never mix; the one that finds the file full renames it
  under a lock and the others follow the new file at their next record.
- Files older than 7 days go, and the oldest go first when the folder passes 100 MB.
- The terminal gets warnings and errors only.
- Every record passes one `RedactionFilter` (core/redact.py) before any handler writes it.

The level comes from `ORKAS_LOG_LEVEL`, else the Settings choice, else INFO.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from orkas.core.redact import redact, set_home

LogLevel = Literal["debug", "info", "warning", "error"]
LEVELS: tuple[LogLevel, ...] = ("debug", "info", "warning", "error")
FILE_BYTES = 10 * 1024 * 1024
TOTAL_BYTES = 100 * 1024 * 1024
KEEP_DAYS = 7
PREFIX = "orkas-"
FORMAT = "%(asctime)s.%(msecs)03d %(levelname)-7s [%(process_name)s %(process)d] %(name)s: %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
_STARTED = time.monotonic()  # this module is imported first thing by every entry point
QUIET = (  # their INFO is per request or per file event, and their DEBUG is whole request bodies
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "keyring",
    "uvicorn.access",
    "watchdog",
    "asyncio",
    "PIL",
    "urllib3",
    "filelock",
    "faiss",
)


def logs_dir(data: Path) -> Path:
    return data / "logs"


class RedactionFilter(logging.Filter):
    """Turns a record into its redacted text once, before any handler formats it: the message with its
    arguments, the traceback and the stack, each through `redact`."""

    def __init__(self, process_name: str) -> None:
        super().__init__()
        self.process_name = process_name

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "redacted", False):
            return True
        try:
            message = record.getMessage()
        except Exception as e:  # a bad format string must not lose the record
            message = f"{record.msg!r} (unformattable: {type(e).__name__})"
        # A continuation line is indented: text from outside (a message, a provider's error) cannot
        # forge a record of its own by starting a line with a timestamp.
        record.msg, record.args = redact(message).replace("\n", "\n    | "), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        record.exc_info = None  # formatted (and redacted) above; handlers must not format it again
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        record.process_name = self.process_name
        record.redacted = True
        return True


class DailyFileHandler(logging.Handler):
    """Appends to today's file in `folder`; see the module docstring for rotation and pruning."""

    def __init__(self, folder: Path, *, file_bytes: int = FILE_BYTES, total_bytes: int = TOTAL_BYTES) -> None:
        super().__init__()
        self.folder = folder
        self.file_bytes = file_bytes
        self.total_bytes = total_bytes
        self._fd: int | None = None
        self._path: Path | None = None
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        prune(folder, total_bytes=total_bytes)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = (self.format(record) + "\n").encode("utf-8", "replace")
            with self._lock():
                fd = self._current(record.created)
                os.write(fd, line)
                if os.fstat(fd).st_size > self.file_bytes:
                    self._rotate()
        except Exception:
            self.handleError(record)

    def _current(self, created: float) -> int:
        path = self.folder / f"{PREFIX}{dt.date.fromtimestamp(created).isoformat()}.log"
        if self._fd is not None and self._path == path and _same_file(self._fd, path):
            return self._fd
        self._close_fd()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._path = path
        return self._fd

    def _rotate(self) -> None:
        """Move the full file aside as the next free part, under a lock other processes respect."""
        assert self._path is not None and self._fd is not None
        with _folder_lock(self.folder):
            if not _same_file(self._fd, self._path) or self._path.stat().st_size <= self.file_bytes:
                return  # another process rotated it first
            stem = self._path.name.removesuffix(".log")
            part = 1
            while (self.folder / f"{stem}.{part}.log").exists():
                part += 1
            os.replace(self._path, self.folder / f"{stem}.{part}.log")
        self._close_fd()
        prune(self.folder, total_bytes=self.total_bytes)

    @contextmanager
    def _lock(self) -> Iterator[None]:
        self.acquire()  # the handler's own lock (logging.Handler always has one)
        try:
            yield
        finally:
            self.release()

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        with self._lock():
            self._close_fd()
        super().close()


def prune(folder: Path, *, total_bytes: int = TOTAL_BYTES, keep_days: int = KEEP_DAYS) -> None:
    """Delete log files older than `keep_days`, then the oldest until the folder fits `total_bytes`."""
    cutoff = time.time() - keep_days * 86400
    files: list[tuple[float, int, Path]] = []
    for path in folder.glob(f"{PREFIX}*.log"):
        try:
            info = path.stat()
        except OSError:
            continue
        if info.st_mtime < cutoff:
            path.unlink(missing_ok=True)
        else:
            files.append((info.st_mtime, info.st_size, path))
    files.sort()
    total = sum(size for _, size, _ in files)
    for _, size, path in files[:-1]:  # today's file stays, whatever its size
        if total <= total_bytes:
            break
        path.unlink(missing_ok=True)
        total -= size


def log_files(data: Path) -> list[Path]:
    """The log files, newest first."""
    folder = logs_dir(data)
    if not folder.is_dir():
        return []
    return sorted(folder.glob(f"{PREFIX}*.log"), key=lambda p: p.stat().st_mtime, reverse=True)


def choose_level(env: Mapping[str, str], setting: str | None = None) -> int:
    """`ORKAS_LOG_LEVEL` wins (for a person debugging from a terminal), then the Settings choice."""
    for value in (env.get("ORKAS_LOG_LEVEL"), setting):
        if value and value.strip().lower() in LEVELS:
            return logging.getLevelName(value.strip().upper())  # type: ignore[no-any-return]
    return logging.INFO


@dataclass
class LogSetup:
    folder: Path
    file: DailyFileHandler
    terminal: logging.Handler
    filter: RedactionFilter
    env: Mapping[str, str]  # the variables that choose the level (ORKAS_LOG_LEVEL), as read at start

    def set_level(self, level: int) -> None:
        # Debug is for Orkas's own records: a library's debug output (the SDK's whole request bodies,
        # every socket event) would drown them, so other loggers stay at info or above.
        logging.getLogger().setLevel(max(level, logging.INFO))
        logging.getLogger("orkas").setLevel(level)
        self.file.setLevel(level)


_setup: LogSetup | None = None
_setup_lock = threading.Lock()


def setup_logging(
    data: Path,
    *,
    process: str,
    env: Mapping[str, str],
    setting: str | None = None,
    terminal: IO[str] | None = None,
    home: Path | None = None,
) -> LogSetup:
    """Configure the root logger once per process; a second call only updates the level."""
    global _setup
    level = choose_level(env, setting)
    with _setup_lock:
        if _setup is not None:
            _setup.set_level(level)
            return _setup
        set_home(home if home is not None else Path.home())
        redaction = RedactionFilter(process)
        file = DailyFileHandler(logs_dir(data))
        file.setFormatter(logging.Formatter(FORMAT, DATE_FORMAT))
        file.addFilter(redaction)
        console = logging.StreamHandler(terminal or sys.stderr)
        console.setLevel(logging.WARNING)
        console.setFormatter(logging.Formatter("orkas: %(levelname)s %(name)s: %(message)s"))
        console.addFilter(redaction)
        root = logging.getLogger()
        for handler in list(root.handlers):  # a library's basicConfig must not write around the filter
            root.removeHandler(handler)
        root.addHandler(file)
        root.addHandler(console)
        for name in QUIET:
            logging.getLogger(name).setLevel(logging.WARNING)
        logging.captureWarnings(True)
        pinned = {k: v for k, v in env.items() if k == "ORKAS_LOG_LEVEL"}
        _setup = LogSetup(logs_dir(data), file, console, redaction, pinned)
        _setup.set_level(level)
        return _setup


def since_start() -> float:
    """Seconds since this process started its entry point (start-up timings in the log)."""
    return time.monotonic() - _STARTED


def current() -> LogSetup | None:
    return _setup


def apply_log_level(setting: str) -> None:
    """The Settings choice changed: this process follows at once (unless ORKAS_LOG_LEVEL pins it)."""
    if _setup is not None:
        _setup.set_level(choose_level(_setup.env, setting))


def reset_for_tests() -> None:
    """Undo `setup_logging` (tests set up logging into several homes in one process)."""
    global _setup
    with _setup_lock:
        if _setup is None:
            return
        root = logging.getLogger()
        for handler in (_setup.file, _setup.terminal):
            root.removeHandler(handler)
            handler.close()
        root.setLevel(logging.WARNING)
        logging.getLogger("orkas").setLevel(logging.NOTSET)
        set_home(None)
        _setup = None


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), path.stat())
    except OSError:
        return False


@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # Windows: one process rotates at a time in practice; a lost race only splits a file
        yield
        return
    with open(folder / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

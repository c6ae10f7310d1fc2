"""Crash reports, kept on this machine: one JSON file per unhandled exception under `<data>/crashes/`.

Python's (the main thread, other threads, the server's event loop, a route that raised) and the
page's (`window.onerror`, unhandled promise rejections, posted to the server) land here, redacted
like the logs. Nothing is sent anywhere: the next start shows that something went wrong, with
"Save diagnostics", and the person decides what to do with the bundle.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
import traceback
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from orkas.core.redact import redact

log = logging.getLogger(__name__)

KEEP = 50  # reports kept; older ones go
MAX_TEXT = 32 * 1024  # characters of a traceback or a page's stack kept per report
SEEN = ".seen"  # names of reports the person has been shown


@dataclass(frozen=True, slots=True)
class Crash:
    id: str
    at: float
    source: str  # python, thread, server, page
    process: str
    summary: str  # the exception type and message, redacted
    details: str  # the traceback or the page's stack, redacted

    def public(self) -> dict[str, Any]:
        return asdict(self)


class CrashReports:
    def __init__(self, folder: Path, *, process: str = "orkas") -> None:
        self.folder = folder
        self.process = process
        self._lock = threading.Lock()

    def record(self, source: str, summary: str, details: str = "") -> Crash:
        crash = Crash(
            id=f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}",
            at=time.time(),
            source=source,
            process=self.process,
            summary=redact(summary)[:1000],
            details=redact(details[-MAX_TEXT:]),
        )
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            target = self.folder / f"{crash.id}.json"
            temporary = target.with_suffix(".tmp")
            temporary.write_text(json.dumps(crash.public(), indent=1), encoding="utf-8")
            os.replace(temporary, target)
            self._trim()
        return crash

    def record_exception(self, source: str, error: BaseException) -> Crash:
        summary = f"{type(error).__name__}: {error}"
        details = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        return self.record(source, summary, details)

    def all(self) -> list[Crash]:
        """Newest first; a report that cannot be read is skipped, not fatal."""
        crashes = []
        for path in sorted(self.folder.glob("*.json"), reverse=True):
            try:
                crashes.append(Crash(**json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, ValueError, TypeError):
                continue
        return crashes

    def unseen(self) -> list[Crash]:
        seen = self._seen()
        return [crash for crash in self.all() if crash.id not in seen]

    def mark_seen(self) -> None:
        with self._lock:
            ids = {crash.id for crash in self.all()}
            if not ids:
                return
            (self.folder / SEEN).write_text("\n".join(sorted(ids)) + "\n", encoding="utf-8")

    def files(self) -> list[Path]:
        return sorted(self.folder.glob("*.json"), reverse=True)

    def _seen(self) -> set[str]:
        try:
            return set((self.folder / SEEN).read_text(encoding="utf-8").split())
        except OSError:
            return set()

    def _trim(self) -> None:
        for path in sorted(self.folder.glob("*.json"))[:-KEEP]:
            path.unlink(missing_ok=True)


_reports: CrashReports | None = None


def install_crash_hooks(reports: CrashReports) -> None:
    """Unhandled exceptions of the main thread and of other threads become crash reports (and are
    logged with their stack), then go on to the default hooks (so a CLI still prints its traceback)."""
    global _reports
    _reports = reports
    previous_hook = sys.excepthook
    previous_thread_hook = threading.excepthook

    def on_exception(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        if not issubclass(kind, KeyboardInterrupt):
            report("python", error)
        previous_hook(kind, error, tb)

    def on_thread_exception(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None and not isinstance(args.exc_value, SystemExit):
            report("thread", args.exc_value)
        previous_thread_hook(args)

    sys.excepthook = on_exception
    threading.excepthook = on_thread_exception


def report(source: str, error: BaseException, reports: CrashReports | None = None) -> Crash | None:
    """Log `error` and keep a crash report of it in `reports` (default: the process's, once hooks are
    installed); never raises."""
    log.critical("unhandled %s exception", source, exc_info=(type(error), error, error.__traceback__))
    reports = reports or _reports
    if reports is None:
        return None
    try:
        return reports.record_exception(source, error)
    except Exception:  # a full disk must not turn one crash into two
        log.warning("could not write a crash report", exc_info=True)
        return None


def reports() -> CrashReports | None:
    return _reports

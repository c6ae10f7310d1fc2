"""The memory guard's verdict on skills from outside Orkas, remembered by content.

Scanning one name and description takes a few milliseconds (the guard looks at many decoded views of
the text), so two thousand skills found at once would hold up the start. Verdicts are kept in
`<data>/cache/skill-guard.json` by the text's SHA-256: a skill already judged costs a lookup; a new one
is judged on the guard's own thread and reported as pending (listed as "checking", not advertised)
until then, and `on_judged` is told when a batch is done so the registry scans again.

Only the guard's rule layer runs here. Its meaning layer was trained on notes people keep, and skill
descriptions are instructions by nature: it flagged 1 in 18 of Anthropic's published skills (see
bench/RESULTS.md, "Skills: the guard on published skills"); the rules flagged 2 of 1,500.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from orkas.adapter.skills.records import PENDING
from orkas.core.fsutil import atomic_write

log = logging.getLogger(__name__)

VERSION = 1  # raise when the guard's rules change: every verdict is judged again


class SkillGuard:
    def __init__(self, cache: Path, *, background: bool = True) -> None:
        self.cache = cache
        self.background = background
        self.on_judged: Callable[[], object] | None = None
        self._lock = threading.Lock()
        self._verdicts: dict[str, str | None] = self._load()
        self._queue: dict[str, str] = {}
        self._worker: threading.Thread | None = None

    def __call__(self, text: str) -> str | None:
        digest = hashlib.sha256(text.encode()).hexdigest()
        with self._lock:
            if digest in self._verdicts:
                return self._verdicts[digest]
            if self.background:
                self._queue[digest] = text
                if self._worker is None or not self._worker.is_alive():
                    self._worker = threading.Thread(target=self._drain, name="skill-guard", daemon=True)
                    self._worker.start()
                return PENDING
        verdict = judge(text)
        with self._lock:
            self._verdicts[digest] = verdict
        self._save()
        return verdict

    def wait(self, timeout: float = 30) -> bool:
        """Until every queued skill is judged (tests, the CLI)."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        return not self._queue

    def _drain(self) -> None:
        while True:
            with self._lock:
                batch = dict(self._queue)
            if not batch:
                return
            judged = {digest: judge(text) for digest, text in batch.items()}
            with self._lock:
                self._verdicts.update(judged)
                for digest in judged:
                    self._queue.pop(digest, None)
            self._save()
            if self.on_judged is not None:
                try:
                    self.on_judged()
                except Exception:  # the registry's rescan: never let it kill the guard's thread
                    log.exception("rescanning skills after the guard failed")

    def _load(self) -> dict[str, str | None]:
        try:
            raw = json.loads(self.cache.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(raw, dict) or raw.get("version") != VERSION or not isinstance(raw.get("verdicts"), dict):
            return {}
        return {k: v if isinstance(v, str) else None for k, v in raw["verdicts"].items()}

    def _save(self) -> None:
        with self._lock:
            data = {"version": VERSION, "verdicts": dict(self._verdicts)}
        try:
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.cache, json.dumps(data).encode())
        except OSError as e:
            log.warning("cannot keep the skill guard's verdicts: %s", e.strerror)


def judge(text: str) -> str | None:
    """None when the text is clean, else the guard's reason (the first finding, with its excerpt)."""
    from orkas.engine.memory.guard import rule_findings  # its tables load on first use

    findings = rule_findings(text)
    if not findings:
        return None
    first = findings[0]
    return f"{first.reason} ({first.kind}: “{first.excerpt.strip()[:80]}”)"

"""The product's knowledge: the user's knowledge base, an index of past conversations, watched folders,
and the background worker that embeds what was added (so nobody waits on embeddings).

Keyword search works the moment text is added; the worker embeds pending chunks in batches and hybrid
search uses whatever is embedded so far. Watched folders re-index on change (watchdog, debounced).

Progress goes to whoever listens (`listen`), as typed `KbProgress` events (progress.py).
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import threading
import time
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orkas.adapter.knowledge.past_chats import PastChats
from orkas.adapter.knowledge.progress import KbProgress
from orkas.adapter.knowledge.watched import WatchedFolders
from orkas.core.errors import OrkasError
from orkas.core.resources import bundled_skill_vectors
from orkas.engine.messages import Message
from orkas.engine.sandbox import PathDenied, PathPolicy

if TYPE_CHECKING:  # numpy and faiss load with the first use of the knowledge base, not with the app
    from orkas.engine.memory.embedders import Embedder
    from orkas.engine.memory.kb import FolderReport, KnowledgeBase

log = logging.getLogger(__name__)


def _safe_name(text: str) -> str:
    """A file name every system accepts (no separators, no characters Windows refuses)."""
    return re.sub(r'[<>:"/\\|?*\x00-\x1f]', "_", text).strip(" .") or "untitled"


class _Closing(Exception):
    pass


class KnowledgeService:
    def __init__(
        self,
        folder: Path,
        embedder: Callable[[], Embedder | None],
        protected: Callable[[], Sequence[Path]] = lambda: (),
    ) -> None:
        """`protected` names the places no source may be or contain (the app's data); credential folders
        and the home folder itself are refused by the path policy anyway."""
        self.folder = folder
        self._protected = protected
        self._embedder_factory = embedder
        self._embedder: Embedder | None = None
        self._ready = threading.Lock()
        self._kb: KnowledgeBase | None = None
        self._chats: KnowledgeBase | None = None
        self._skills: KnowledgeBase | None = None  # the skills' names, descriptions and bodies (skill_search)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None
        self._watched = WatchedFolders(folder, self._reindex)
        self._past = PastChats(folder, lambda: self.chats, self.kick)
        self.progress: dict[str, int] = {"embedded": 0}
        self._rate = 0.0  # chunks a second the worker covers (measured), for the time left
        self._listeners: list[Callable[[KbProgress], None]] = []
        # Folders are indexed one at a time, off the caller's thread: a big folder must not hold up a request
        self._indexer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="orkas-indexer")
        self._jobs: set[Future[None]] = set()  # folders queued or being indexed (`wait_idle` waits for them too)
        self._warming: threading.Thread | None = None
        self._warming_lock = threading.Lock()
        self.indexing: dict[str, Any] | None = None  # the folder being indexed: path, done, total
        self.embedder_problem: str | None = None  # why the chosen embedder is not running

    # ---- progress ----
    def listen(self, listener: Callable[[KbProgress], None]) -> Callable[[], None]:
        """Call `listener` with every progress event (from worker threads) until the returned function is called."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, event: KbProgress) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a broken listener must not stop indexing
                log.exception("a progress listener failed")

    # Opened on first use: loading the embedder and the indexes costs nothing at start-up.
    @property
    def kb(self) -> KnowledgeBase:
        self._open()
        assert self._kb is not None
        return self._kb

    @property
    def chats(self) -> KnowledgeBase:
        self._open()
        assert self._chats is not None
        return self._chats

    @property
    def skills(self) -> KnowledgeBase:
        self._open()
        assert self._skills is not None
        return self._skills

    @property
    def is_open(self) -> bool:
        """Opened already: a search may use it without waiting for the embedder to load."""
        return self._skills is not None

    def warm(self) -> threading.Thread | None:
        """Open the bases and load the embedder on a thread now, so that what comes next does not wait
        (the first turn's end indexes the conversation). Once: later calls return at once."""
        with self._warming_lock:
            if self._kb is not None or self._warming is not None:
                return self._warming

            def opening() -> None:
                try:
                    self._open()
                except Exception:  # reported again, where it matters, when the base is used
                    log.warning("warming the knowledge base failed", exc_info=True)

            self._warming = threading.Thread(target=opening, name="orkas-kb-warm", daemon=True)
            self._warming.start()
            return self._warming

    def _open(self) -> None:
        with self._ready:
            if self._kb is not None:
                return
            from orkas.engine.memory.kb import KnowledgeBase

            began = time.perf_counter()
            self._embedder = self._make_embedder()
            self._kb = KnowledgeBase.open(self.folder / "documents", embedder=self._embedder)
            self._chats = KnowledgeBase.open(self.folder / "conversations", embedder=self._embedder)
            self._skills = KnowledgeBase.open(
                self.folder / "skills", embedder=self._embedder, seed=bundled_skill_vectors()
            )  # the bundled skills' vectors come with the app: not embedded again on every install
            log.info(
                "knowledge base open in %.0f ms (meaning search %s)",
                (time.perf_counter() - began) * 1000,
                "on" if self._embedder is not None else "off",
            )
        self._start_worker()
        for watched in self.watched():
            self._watched.watch(Path(watched))

    def _make_embedder(self) -> Embedder | None:
        try:
            embedder = self._embedder_factory()
        except (OSError, ValueError, OrkasError) as e:  # keyword search goes on without it
            log.warning("meaning search is off: %s", e)
            self.embedder_problem = str(e)
            return None
        self.embedder_problem = None
        return embedder

    def use_embedder(self) -> None:
        """The choice of embedder changed: apply it to both indexes. Vectors come from the cache where
        that model ran before; the rest is embedded in the background."""
        with self._ready:
            if self._kb is None or self._chats is None or self._skills is None:
                return  # not open yet: it opens with the new choice
            self._embedder = self._make_embedder()
            for kb in (self._kb, self._chats, self._skills):
                kb.use_embedder(self._embedder)
        self.kick()

    # ---- the embedding worker ----
    def _start_worker(self) -> None:
        self._worker = threading.Thread(target=self._work, name="orkas-embedder", daemon=True)
        self._worker.start()
        self._wake.set()

    def _work(self) -> None:
        """Two passes: every base's chunks get a first vector (a first tier where the embedder has one, so
        meaning search covers everything soon), the person's documents first; then the full vectors replace
        the first tier's, stepping aside as soon as new chunks come in."""
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            for refine in (False, True):
                for kb in (self._kb, self._chats, self._skills):  # the person's documents first
                    if refine and self._wake.is_set():
                        break  # new chunks came in: cover them first
                    if not self._embed(kb, refine):
                        return
            if not self._stop.is_set() and not self._wake.is_set():
                self._emit(KbProgress(phase="idle", counts=self._counts()))

    def _embed(self, kb: KnowledgeBase | None, refine: bool) -> bool:
        """Embed `kb`'s waiting chunks (one pass); False when the worker is closing."""
        while kb is not None and not self._stop.is_set():
            began = time.perf_counter()
            try:
                done = kb.embed_pending(batch=16, limit=64 if not refine else 16, refine=refine)
            except Exception:  # an embedder failure must not kill the worker; keyword search goes on
                if self._stop.is_set():
                    return False  # closing: the bases are being closed under us
                log.exception("embedding failed; will retry on the next change")
                return True
            if not done:
                kb.save()
                if self.progress["embedded"]:
                    log.info("embedding worker idle: %d chunks embedded so far", self.progress["embedded"])
                return True
            if not refine:  # the measured rate of covering chunks, for "about M minutes left"
                seconds = time.perf_counter() - began
                rate = done / seconds if seconds > 0 else 0.0
                self._rate = rate if not self._rate else 0.7 * self._rate + 0.3 * rate
            if kb is self._skills or (refine and self._wake.is_set()):  # one batch, then what matters more
                self._wake.set()
                return True
            if not refine:
                self.progress["embedded"] += done  # chunks covered by meaning search (the bar's progress)
            self._emit(KbProgress(phase="embedding", counts=self._counts()))
        return not self._stop.is_set()

    def _counts(self) -> dict[str, Any]:
        pending = self._pending()
        refining = sum(kb.refining() for kb in (self._kb, self._chats) if kb is not None)
        eta = round(pending / self._rate) if pending and self._rate else None
        return {"pending": pending, "embedded": self.progress["embedded"], "refining": refining, "eta_seconds": eta}

    def _pending(self) -> int:
        return sum(kb.pending() for kb in (self._kb, self._chats) if kb is not None)

    def kick(self) -> None:
        self._wake.set()

    def wait_idle(self, timeout: float = 60) -> bool:
        """For tests and benchmarks: block until nothing is pending."""
        import time

        deadline = time.monotonic() + timeout
        self._open()
        while time.monotonic() < deadline:
            # A folder still being read has nothing pending yet: idle only once it is read and embedded too.
            if not self._jobs and self._pending() == 0 and (self._skills is None or self._skills.pending() == 0):
                return True
            self._wake.set()
            time.sleep(0.05)
        return False

    # ---- documents ----
    def add_text(self, doc_id: str, text: str, source: str | None = None) -> int:
        count = self.kb.add_text(doc_id, text, source=source)
        self.kick()
        return count

    def source(self, path: Path) -> PathPolicy:
        """The path policy of a source the person gives: rooted at it, so nothing inside leads out of it.
        Raises `ValueError` for the home folder itself, protected places, and what does not exist."""
        if not path.is_absolute() or not path.exists():
            raise ValueError(f"{path} is not an existing full path")
        try:
            return PathPolicy.source(path, protected=[*self._protected(), self.folder])
        except PathDenied as e:
            raise ValueError(f"{path} cannot be indexed: {e.reason}") from None

    def add_path(self, path: Path, *, watch: bool = False) -> dict[str, Any]:
        """Index a file or a folder now (and watch the folder if asked); returns what changed."""
        policy = self.source(path)
        path = policy.workspace
        if path.is_dir():
            report = self._index_folder(path)
            if watch:
                self._watched.remember(path)
                self._watched.watch(path)
            self.kick()
            return asdict(report)
        count = self.kb.add_file(path, policy=policy)
        self.kick()
        from orkas.engine.memory.kb import FolderReport

        return asdict(FolderReport(added=1 if count else 0, unchanged=0 if count else 1, failed=[]))

    def add_path_later(self, path: Path, *, watch: bool = False) -> None:
        """`add_path` in the background; its report arrives as an "indexed" event (or "failed")."""

        def run() -> None:
            try:
                report = self.add_path(path, watch=watch)
            except _Closing:
                return
            except (OSError, ValueError) as e:
                self._emit(KbProgress(phase="failed", path=str(path), error=str(e)))
            else:
                self._emit(KbProgress(phase="indexed", path=str(path), report=report))

        job = self._indexer.submit(run)
        self._jobs.add(job)
        job.add_done_callback(self._jobs.discard)

    def _index_folder(self, folder: Path) -> FolderReport:
        def step(done: int, total: int, current: str) -> None:
            if self._stop.is_set():
                raise _Closing  # the app is quitting: stop between files (nothing half-written)
            self.indexing = {"path": str(folder), "done": done, "total": total}
            self._emit(KbProgress(phase="indexing", path=str(folder), done=done, total=total, file=current))

        policy = self.source(folder)
        self.indexing = {"path": str(folder), "done": 0, "total": None}
        try:
            return self.kb.add_folder(folder, progress=step, policy=policy)
        finally:
            self.indexing = None

    def remove(self, doc_id: str) -> bool:
        return self.kb.remove(doc_id)

    def status(self) -> dict[str, Any]:
        return {
            "documents": self.kb.documents(),
            **self._counts(),
            "embedder": self._embedder.name if self._embedder is not None else None,
            "embedder_problem": self.embedder_problem,
            "watched": self.watched(),
            "indexing": self.indexing,
        }

    def export_zip(self) -> bytes:
        """Every document's text in one zip: notes under notes/, files under files/ by their folders,
        and documents.json listing ids, sources and when each was added."""
        documents = self.kb.documents()
        files = [d["id"] for d in documents if d["id"].startswith("/")]
        base = Path(os.path.commonpath([str(Path(f).parent) for f in files])).parent if files else Path("/")
        taken: set[str] = set()
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for document in documents:
                doc_id = document["id"]
                if doc_id in files:
                    name = "files/" + Path(doc_id).relative_to(base).as_posix()
                elif doc_id.startswith("note/"):
                    name = f"notes/{_safe_name(doc_id[5:])}.txt"
                else:
                    name = f"other/{_safe_name(doc_id)}.txt"
                stem, dot, suffix = name.rpartition(".")
                number = 2
                while name in taken:
                    name, number = f"{stem} ({number}){dot}{suffix}", number + 1
                taken.add(name)
                archive.writestr(name, self.kb.read(doc_id))
            manifest = [{k: d[k] for k in ("id", "source", "added", "chunks")} for d in documents]
            archive.writestr("documents.json", json.dumps(manifest, ensure_ascii=False, indent=1))
        return buffer.getvalue()

    # ---- conversations (past_chats.py) ----
    def index_conversation(self, conversation_id: str, title: str, messages: Sequence[Message]) -> None:
        self._past.index(conversation_id, title, messages)

    def forget_conversation(self, conversation_id: str) -> None:
        self._past.forget(conversation_id)

    # ---- watched folders (watched.py) ----
    def watched(self) -> list[str]:
        return self._watched.listed()

    def unwatch(self, folder: str) -> bool:
        return self._watched.unwatch(folder)

    def _reindex(self, folder: Path) -> None:
        if self.folder in folder.parents or folder == self.folder:
            return  # never index our own index
        try:
            began = time.perf_counter()
            self._index_folder(folder)
            log.info("re-indexed %s in %.0f ms", folder, (time.perf_counter() - began) * 1000)
            self.kick()
        except _Closing:
            pass
        except (OSError, ValueError):
            log.warning("re-indexing %s failed", folder, exc_info=True)

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        self._indexer.shutdown(wait=True, cancel_futures=True)
        self._watched.close()
        if self._worker is not None:
            self._worker.join(5)
        for kb in (self._kb, self._chats, self._skills):
            if kb is not None:
                kb.close()

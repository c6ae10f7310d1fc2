"""Putting a workspace back as a checkpoint holds it — what file tools and shell commands changed alike.

`plan` compares the workspace now (a fresh checkpoint, which is also the rewind's own undo) with the target: the
files it will restore (changed since), create (deleted since) and delete (made since), and what it cannot restore
(files left out as too big). `rewind` applies it through folder descriptors opened without following links, as the
file tools act (sandbox/pinned.py): a link planted in the workspace is deleted or replaced as a link, never written
through. Crash-safe: a journal in the workspace's space says where the rewind stands — taking the checkpoint of
"now" (a crash there has touched nothing), then applying (a crash there is rolled back to that checkpoint) — and
`recover` finishes the story before anything else uses the space, so a crash never leaves a half-rewound workspace.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from orkas.core.fsutil import atomic_write
from orkas.engine.checkpoints.scan import DIR_FLAGS, Entry
from orkas.engine.checkpoints.store import CheckpointStore, Taken

JOURNAL = "rewind.json"


@dataclass(frozen=True, slots=True)
class Plan:
    target: str
    now: str  # the checkpoint of the workspace as it was before the rewind: rewinding to it undoes the rewind
    restore: tuple[str, ...] = ()
    create: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()
    cannot: tuple[str, ...] = ()  # left out of the target as too big: left as they are
    failed: tuple[str, ...] = ()  # changed by something else while the rewind wrote: left as that left them
    _writes: tuple[str, ...] = field(default=(), repr=False)
    _folders: tuple[str, ...] = field(default=(), repr=False)
    _gone_folders: tuple[str, ...] = field(default=(), repr=False)

    def as_json(self) -> dict[str, object]:
        return {
            "checkpoint": self.target,
            "before": self.now,
            "restore": list(self.restore),
            "create": list(self.create),
            "delete": list(self.delete),
            "cannot": list(self.cannot),
            "failed": list(self.failed),
        }


def plan(store: CheckpointStore, root: Path, target: str) -> tuple[Plan, Taken]:
    """What rewinding `root` to `target` would do, against a checkpoint of it taken now."""
    with store.holding(root):
        recover(store, root)
        now = store.take(root, rules_from=_rules_of(store, root, target))
        return _compare(store, root, target, now.id), now


def rewind(store: CheckpointStore, root: Path, target: str, note: dict[str, str] | None = None) -> Plan:
    """Put `root` back as checkpoint `target` holds it. Returns what was done (`Plan.now` undoes it; `Plan.failed`:
    what changed under it meanwhile and was left). `note` is kept in the journal for whoever finishes a crashed one."""
    with store.holding(root):  # the whole of it: another process's checkpoint or rewind waits
        recover(store, root)
        journal = store.space(root) / JOURNAL
        _journal(journal, {"state": "checkpointing", "target": target, **(note or {})})
        # "Now" read by the target's .gitignore: what was hidden since (a `*` written by a command) is seen,
        # kept for the undo, and deleted.
        now = store.take(root, rules_from=_rules_of(store, root, target))
        done = _compare(store, root, target, now.id)
        _journal(journal, {"state": "applying", "target": target, "before": now.id, **(note or {})})
        failed = _apply(store, root, store.entries(root, target), done)
        journal.unlink()
        return replace(done, failed=tuple(failed))


@dataclass(frozen=True, slots=True)
class Recovered:
    said: str  # "nothing had changed" or "rolled back"
    undo: str | None  # rolled back: the checkpoint of the workspace as the rollback found it (later work)
    note: dict[str, str]  # what the rewind's caller kept in its journal


def recover(store: CheckpointStore, root: Path) -> Recovered | None:
    """A rewind a crash interrupted: nothing to do if it was still taking its checkpoint, else rolled back to the
    workspace as it was before it began — after a checkpoint of the workspace as it is now (work done since the
    crash), so the rollback itself can be undone. None: nothing was pending. Holding the space's lock, a journal
    can only be a dead writer's."""
    with store.holding(root):
        journal = store.space(root) / JOURNAL
        try:
            said = json.loads(journal.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            said = {"state": "checkpointing"}  # written half: it had not started changing anything
        note = {k: str(v) for k, v in said.items() if k not in ("state", "target", "before")}
        if said.get("state") == "applying" and said.get("before"):
            before = str(said["before"])
            found = store.take(root, rules_from=_rules_of(store, root, before))
            _apply(store, root, store.entries(root, before), _compare(store, root, before, found.id))
            journal.unlink()
            return Recovered("rolled back", found.id, note)
        journal.unlink()
        return Recovered("nothing had changed", None, note)


def _rules_of(store: CheckpointStore, root: Path, checkpoint: str) -> Callable[[str], str]:
    """The .gitignore texts checkpoint `checkpoint` holds, by path ("" where it had none)."""
    entries = store.entries(root, checkpoint)

    def text(path: str) -> str:
        entry = entries.get(path)
        if entry is None or entry[0] != "f":
            return ""
        try:
            return store.content(entry[5])[: 256 * 1024].decode("utf-8", errors="replace")
        except OSError:
            return ""

    return text


def _compare(store: CheckpointStore, root: Path, target: str, now: str) -> Plan:
    want = store.entries(root, target)
    have = store.entries(root, now)
    restore: list[str] = []
    create: list[str] = []
    delete: list[str] = []
    cannot: list[str] = []
    writes: list[str] = []
    folders: list[str] = []
    gone: list[str] = []
    for path, entry in want.items():
        kind = entry[0]
        there = have.get(path)
        if kind == "s":
            cannot.append(path)
        elif kind == "d":
            if there is None or there[0] != "d":
                folders.append(path)
        elif there is None or there[0] != kind or there[5] != entry[5] or (kind == "f" and there[1] != entry[1]):
            (create if there is None or there[0] == "d" else restore).append(path)
            writes.append(path)
    for path, entry in have.items():
        wanted = want.get(path)
        if entry[0] == "d":
            if wanted is None or wanted[0] != "d":
                gone.append(path)
        elif entry[0] == "s" and wanted is None:
            cannot.append(path)  # made since, too big to keep for an undo: left where it is
        elif wanted is None or wanted[0] == "d":
            delete.append(path)
    return Plan(
        target,
        now,
        restore=tuple(sorted(restore)),
        create=tuple(sorted(create)),
        delete=tuple(sorted(delete)),
        cannot=tuple(sorted(cannot)),
        _writes=tuple(writes),
        _folders=tuple(sorted(folders, key=lambda p: p.count("/"))),
        _gone_folders=tuple(sorted(gone, key=lambda p: -p.count("/"))),
    )


def _apply(store: CheckpointStore, root: Path, want: dict[str, Entry], done: Plan) -> list[str]:
    """Deletions (deepest first), then folders, then files. A path something else changed meanwhile (a command of
    another chat in the same folder) is left and named: the rest of the rewind still happens."""
    failed: list[str] = []
    steps: list[tuple[str, Callable[[int, str], None], bool]] = [
        *((path, _remove, False) for path in (*done.delete, *done._gone_folders)),
        *((path, _folder_as(want[path][1]), True) for path in done._folders),
        *((path, _put_as(store, want[path]), True) for path in done._writes),
    ]
    top = os.open(root, DIR_FLAGS)
    try:
        for path, act, create in steps:
            try:
                _at(top, path, act, create=create)
            except OSError:
                failed.append(path)
    finally:
        os.close(top)
    return failed


def _folder_as(mode: int) -> Callable[[int, str], None]:
    return lambda fd, name: _folder(fd, name, mode)


def _put_as(store: CheckpointStore, entry: Entry) -> Callable[[int, str], None]:
    def put(fd: int, name: str) -> None:
        _put(fd, name, entry, store.content(entry[5]) if entry[0] == "f" else b"")

    return put


def _at(top: int, path: str, act: Callable[[int, str], None], *, create: bool = False) -> None:
    """Run `act(folder_fd, name)` in `path`'s folder, reached from the root without following a link."""
    *parts, name = path.split("/")
    fds: list[int] = []
    fd = top
    try:
        for part in parts:
            try:
                fd = os.open(part, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    return
                os.mkdir(part, 0o755, dir_fd=fd)
                fd = os.open(part, DIR_FLAGS, dir_fd=fd)
            fds.append(fd)
        act(fd, name)
    finally:
        for opened in fds:
            os.close(opened)


def _remove(fd: int, name: str) -> None:
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(name, dir_fd=fd)
        return
    try:
        os.rmdir(name, dir_fd=fd)
    except OSError as e:
        if e.errno != errno.ENOTEMPTY:
            raise
        # What is left in it was never kept (ignored, like a build folder): deleting it could not be undone.


def _folder(fd: int, name: str, mode: int) -> None:
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(name, dir_fd=fd)
            raise FileNotFoundError
    except FileNotFoundError:
        os.mkdir(name, mode, dir_fd=fd)
    inner = os.open(name, DIR_FLAGS, dir_fd=fd)
    try:
        os.fchmod(inner, mode)
    finally:
        os.close(inner)


def _put(fd: int, name: str, entry: Entry, data: bytes) -> None:
    """The file (or link) as the checkpoint holds it: made beside, then renamed over what is there (never through)."""
    temp = f".{name[:100]}.{secrets.token_hex(4)}.orkas-rewind"
    if entry[0] == "l":
        os.symlink(entry[5], temp, dir_fd=fd)
    else:
        out = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
            os.fchmod(out, entry[1])
            os.fsync(out)
        finally:
            os.close(out)
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            _remove(fd, name)
    except FileNotFoundError:
        pass
    os.rename(temp, name, src_dir_fd=fd, dst_dir_fd=fd)


def _journal(path: Path, said: dict[str, str]) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    atomic_write(path, json.dumps(said).encode())  # on disk before the folder changes: a crash finds it

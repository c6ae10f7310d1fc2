"""Checkpoints and rewind on a real folder: what a command changed (deleted, rewrote, chmod-ed, made, linked) comes
back exactly — bytes, modes, deletions —; ignored files are neither kept nor touched; a link planted in the workspace
is never written through; storage grows by what changed; a crash mid-rewind is rolled back by `recover`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orkas.engine.checkpoints.ignore import ignored, parse
from orkas.engine.checkpoints.restore import JOURNAL, plan, recover, rewind
from orkas.engine.checkpoints.scan import Limits
from orkas.engine.checkpoints.store import CheckpointStore
from tests.folder_tree import tree


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "deep").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print('one')\n")
    (ws / "src" / "deep" / "data.bin").write_bytes(bytes(range(256)) * 10)
    (ws / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "empty").mkdir()
    (ws / "link").symlink_to("src/main.py")
    (ws / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_bytes(b"object")
    (ws / "debug.log").write_text("noise")
    (ws / "keep.log").write_text("kept")
    return ws


def test_what_a_command_changed_comes_back_exactly(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "store")
    before = tree(workspace)
    taken = store.take(workspace)
    assert taken.files == 6 and not taken.unchanged  # main.py, data.bin, run.sh, link, .gitignore, keep.log
    # a shell command's work: deletes, rewrites, modes, new files and folders, a link swapped, ignored noise
    (workspace / "src" / "main.py").write_text("print('two')\n")
    (workspace / "src" / "deep" / "data.bin").unlink()
    (workspace / "src" / "deep").rmdir()
    (workspace / "run.sh").chmod(0o600)
    (workspace / "new").mkdir()
    (workspace / "new" / "made.txt").write_text("made")
    (workspace / "empty").rmdir()
    (workspace / "link").unlink()
    (workspace / "link").symlink_to("/etc/passwd")
    (workspace / "build" / "more.o").write_bytes(b"more")
    (workspace / "debug.log").write_text("more noise")
    preview, now = plan(store, workspace, taken.id)
    assert preview.restore == ("link", "run.sh", "src/main.py") and preview.create == ("src/deep/data.bin",)
    assert preview.delete == ("new/made.txt",) and preview.cannot == ()
    done = rewind(store, workspace, taken.id)
    after = tree(workspace)
    assert after.pop("build/more.o")[2] == b"more" and after.pop("debug.log")[2] == b"more noise"  # ignored: untouched
    before.pop("debug.log")
    assert after == before
    assert not (tmp_path / "store" / "spaces" / store.space(workspace).name / JOURNAL).exists()
    # the rewind is itself undoable: its own checkpoint of "now"
    rewind(store, workspace, done.now)
    assert (workspace / "src" / "main.py").read_text() == "print('two')\n" and (workspace / "new" / "made.txt").exists()
    assert os.readlink(workspace / "link") == "/etc/passwd" and now.id == done.now


def test_a_link_planted_in_the_workspace_is_replaced_never_written_through(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "store")
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "main.py").write_text("the person's own file")
    taken = store.take(workspace)
    src = workspace / "src"
    for child in sorted(src.rglob("*"), reverse=True):
        child.rmdir() if child.is_dir() else child.unlink()
    src.rmdir()
    src.symlink_to(outside)  # src/ now leads to the home folder: src/main.py would be ~/main.py
    rewind(store, workspace, taken.id)
    assert (outside / "main.py").read_text() == "the person's own file"
    assert not (workspace / "src").is_symlink() and (workspace / "src" / "main.py").read_text() == "print('one')\n"


def test_a_checkpoint_never_reads_through_a_link(tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "id_rsa").write_text("KEY")
    (workspace / "keys").symlink_to(outside)
    store = CheckpointStore(tmp_path / "store")
    entries = store.entries(workspace, store.take(workspace).id)
    assert entries["keys"][0] == "l" and not any(p.startswith("keys/") for p in entries)
    stored = b"".join(p.read_bytes() for p in (tmp_path / "store" / "objects").rglob("*") if p.is_file())
    assert b"KEY" not in stored


def test_unchanged_costs_nothing_and_storage_grows_by_the_changed_bytes(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "store", Limits(racy_ns=0))  # no file counts as just written
    (workspace / "big.bin").write_bytes(os.urandom(200_000))
    first = store.take(workspace)

    def size() -> int:
        return sum(p.stat().st_size for p in (tmp_path / "store").rglob("*") if p.is_file())

    grown = size()
    again = store.take(workspace)
    assert again.unchanged and again.id == first.id and size() == grown and again.hashed == 0
    (workspace / "small.txt").write_text("x" * 1000)
    changed = store.take(workspace)
    assert not changed.unchanged and changed.new_bytes < 2000 and size() - grown < 5000
    fresh = CheckpointStore(tmp_path / "store")  # another process: the manifests on disk, read back
    assert fresh.entries(workspace, changed.id) == store.entries(workspace, changed.id)


def test_a_file_too_big_is_listed_not_kept_and_a_rewind_says_so(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "store", Limits(max_file=1000))
    (workspace / "huge.bin").write_bytes(b"x" * 5000)
    taken = store.take(workspace)
    assert "huge.bin" in taken.left_out
    (workspace / "huge.bin").write_bytes(b"y" * 5000)
    preview, _ = plan(store, workspace, taken.id)
    assert "huge.bin" in preview.cannot and "huge.bin" not in preview.restore


def test_a_rewind_interrupted_while_applying_is_rolled_back(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "store")
    taken = store.take(workspace)
    (workspace / "src" / "main.py").write_text("print('after')\n")
    (workspace / "new.txt").write_text("new")
    expected = tree(workspace)
    now = store.take(workspace)
    # as if a crash came after half the work: one file already put back, the journal still "applying"
    (workspace / "src" / "main.py").write_text("print('one')\n")
    journal = store.space(workspace) / JOURNAL
    journal.write_text(json.dumps({"state": "applying", "target": taken.id, "before": now.id}))
    assert getattr(recover(CheckpointStore(tmp_path / "store"), workspace), "said", None) == "rolled back"
    assert tree(workspace) == expected and not journal.exists()
    journal.write_text(json.dumps({"state": "checkpointing", "target": taken.id}))
    assert getattr(recover(store, workspace), "said", None) == "nothing had changed" and tree(workspace) == expected


def test_gitignore_lines_as_git_reads_them() -> None:
    rules = [parse("*.pyc\n/dist\nlogs/\ndoc/**/*.tmp\n!important.pyc\n", ""), parse("local.txt\n", "pkg")]
    assert ignored(rules, "a/b.pyc", "b.pyc", False) and not ignored(rules, "important.pyc", "important.pyc", False)
    assert ignored(rules, "dist", "dist", True) and not ignored(rules, "pkg/dist", "dist", True)
    assert ignored(rules, "x/logs", "logs", True) and not ignored(rules, "logs", "logs", False)
    assert ignored(rules, "doc/a/b/c.tmp", "c.tmp", False) and ignored(rules, "doc/c.tmp", "c.tmp", False)
    assert ignored(rules, "pkg/local.txt", "local.txt", False) and not ignored(rules, "local.txt", "local.txt", False)
    assert ignored([], ".git", ".git", True)


def test_a_group_agent_s_worktree_hidden_from_git_rewinds_with_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    (ws / ".git" / "info").mkdir(parents=True)
    (ws / ".git" / "info" / "exclude").write_text(".orkas/\n")
    tree_of_coder = ws / ".orkas" / "worktrees" / "coder"
    tree_of_coder.mkdir(parents=True)
    (tree_of_coder / ".git").write_text("gitdir: ../../../.git/worktrees/coder\n")
    (tree_of_coder / "app.py").write_text("v1\n")
    (ws / ".orkas" / "cache").mkdir()
    store = CheckpointStore(tmp_path / "store")
    taken = store.take(ws)
    entries = store.entries(ws, taken.id)
    assert ".orkas/worktrees/coder/app.py" in entries and not any(p.startswith(".git/") for p in entries)
    (tree_of_coder / "app.py").write_text("v2 by the coder\n")
    rewind(store, ws, taken.id)
    assert (tree_of_coder / "app.py").read_text() == "v1\n"


def test_the_app_s_data_folder_inside_the_workspace_is_never_read_nor_rewound(tmp_path: Path) -> None:
    home = tmp_path / "home"  # a chat working in the home folder, where the data folder lives
    data = home / ".local" / "share" / "Orkas"
    (data / "conversations").mkdir(parents=True)
    (data / "conversations" / "chat.jsonl").write_text("the person's conversations")
    (home / "notes.txt").write_text("v1")
    store = CheckpointStore(data / "checkpoints", skip=(data,))
    taken = store.take(home)
    assert not any(p.startswith(".local/share/Orkas/") for p in store.entries(home, taken.id))
    (data / "conversations" / "later.jsonl").write_text("a chat made after the checkpoint")
    (home / "notes.txt").write_text("v2")
    preview, _ = plan(store, home, taken.id)
    assert preview.delete == () and preview.restore == ("notes.txt",)
    rewind(store, home, taken.id)
    assert (data / "conversations" / "later.jsonl").exists() and (home / "notes.txt").read_text() == "v1"


def test_a_same_size_rewrite_with_its_old_time_stamp_put_back_is_still_seen(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = ws / "settings.py"
    settings.write_text("url = https://good.example\n")
    os.utime(settings, (1_700_000_000, 1_700_000_000))
    store = CheckpointStore(tmp_path / "store")
    taken = store.take(ws)
    settings.write_text("url = https://evil.example\n")  # same size, in place (same inode)…
    os.utime(settings, (1_700_000_000, 1_700_000_000))  # …and `touch -d` puts the old time back (not the ctime)
    preview, _ = plan(store, ws, taken.id)
    assert preview.restore == ("settings.py",)
    rewind(store, ws, taken.id)
    assert settings.read_text() == "url = https://good.example\n"


def test_a_gitignore_written_since_hides_nothing_from_checkpoints_or_a_rewind(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "a.txt").write_text("ORIG_A")
    (ws / "src" / "b.txt").write_text("ORIG_B")
    (ws / "c.txt").write_text("ORIG_C")
    store = CheckpointStore(tmp_path / "store")
    first = store.take(ws)
    (ws / ".gitignore").write_text("*\n")  # a command hides everything…
    (ws / "a.txt").write_text("EVIL_A")
    (ws / "c.txt").unlink()
    (ws / "planted.txt").write_text("survive me")
    later = store.take(ws)  # …yet what was kept stays kept
    assert {"a.txt", "src/b.txt"} <= set(store.entries(ws, later.id))
    done = rewind(store, ws, first.id)
    assert (ws / "a.txt").read_text() == "ORIG_A" and (ws / "c.txt").read_text() == "ORIG_C"
    assert not (ws / "planted.txt").exists() and not (ws / ".gitignore").exists()  # seen by the old rules: deleted
    rewind(store, ws, done.now)  # and the undo brings back all of it, the planted file too
    assert (ws / "planted.txt").read_text() == "survive me" and (ws / "a.txt").read_text() == "EVIL_A"


def test_a_rollback_after_a_crash_keeps_the_work_done_since_for_its_undo(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "store")
    taken = store.take(workspace)
    (workspace / "src" / "main.py").write_text("print('after')\n")
    now = store.take(workspace)
    journal = store.space(workspace) / JOURNAL
    journal.write_text(json.dumps({"state": "applying", "target": taken.id, "before": now.id, "conversation": "c1"}))
    (workspace / "important.txt").write_text("the person's work after the crash")
    found = recover(store, workspace)
    assert found is not None and found.said == "rolled back" and found.note == {"conversation": "c1"}
    assert not (workspace / "important.txt").exists()
    assert found.undo is not None
    rewind(store, workspace, found.undo)
    assert (workspace / "important.txt").read_text() == "the person's work after the crash"


def test_a_folder_that_ignores_itself_is_left_alone_by_a_rewind(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".venv" / "lib").mkdir(parents=True)
    (ws / ".venv" / ".gitignore").write_text("*\n")  # as python -m venv, pytest and mypy write them
    (ws / ".venv" / "lib" / "site.py").write_text("the person's environment")
    (ws / "app.py").write_text("v1")
    store = CheckpointStore(tmp_path / "store")
    taken = store.take(ws)
    (ws / "app.py").write_text("v2")
    preview, _ = plan(store, ws, taken.id)
    assert preview.delete == () and preview.restore == ("app.py",)
    rewind(store, ws, taken.id)
    assert (ws / ".venv" / "lib" / "site.py").exists() and (ws / "app.py").read_text() == "v1"

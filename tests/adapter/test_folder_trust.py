"""Folder trust and the person's own instructions, as stored: an answer by folder (a parent's covers its folders, a
nearer "declined" wins), a damaged file read as no trust at all, and the other agents' files offered by name only."""

from __future__ import annotations

from pathlib import Path

import pytest

from orkas.adapter.settings import personal
from orkas.adapter.settings.store import SettingsStore
from orkas.adapter.settings.trust import FolderTrust
from orkas.core.errors import ConfigError


def test_a_parent_s_trust_covers_its_folders_and_a_nearer_answer_wins(tmp_path: Path) -> None:
    code, repo, fork = tmp_path / "code", tmp_path / "code" / "repo", tmp_path / "code" / "fork"
    for folder in (repo, fork):
        folder.mkdir(parents=True)
    trust = FolderTrust(tmp_path / "data" / "trusted_folders.json")
    assert trust.answer(repo) is None
    trust.set(code, "trusted")
    trust.set(fork, "declined")
    assert trust.trusts(repo) and not trust.trusts(fork) and trust.answer(fork) == "declined"
    assert [a.folder for a in trust.trusted()] == [str(code)]
    assert trust.remove(code) and not trust.trusts(repo) and not trust.remove(code)
    with pytest.raises(ConfigError):
        trust.set(tmp_path / "missing", "trusted")


def test_a_damaged_file_trusts_nothing_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "trusted_folders.json"
    path.write_text('{"folders": [{"folder": "/", "answer": "trusted"}')
    trust = FolderTrust(path)
    assert not trust.trusts(tmp_path) and trust.problem and "could not be read" in trust.problem


def test_the_other_agents_files_are_offered_by_name_and_read_only_when_chosen(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "AGENTS.md").write_text("Prefer rg over grep.")
    store = SettingsStore(tmp_path / "settings.json")
    assert personal.found(home) == [{"key": "codex", "tool": "Codex", "path": "~/.codex/AGENTS.md", "size": 20}]
    assert personal.section(store.load().preferences, home) is None  # nothing read before the answer
    chosen = personal.choose(store, home, "codex", "import")
    assert chosen.personal_instructions == "Prefer rg over grep." and chosen.instructions_offered
    (home / ".codex" / "AGENTS.md").write_text("changed")  # a copy: later edits there do not reach it
    assert "Prefer rg" in (personal.section(store.load().preferences, home) or "")
    with pytest.raises(ConfigError):
        personal.choose(store, home, "claude", "live")  # no such file: refused now, not at every turn
    assert personal.choose(store, home, "codex", "live").personal_file == "codex"
    assert "changed" in (personal.section(store.load().preferences, home) or "")

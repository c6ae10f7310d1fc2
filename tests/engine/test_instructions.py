"""Project instruction files found as the ecosystem writes them: one per folder from the root down (AGENTS.md
first, the others only where it is absent), a personal .local.md after its folder's file, @path imports inside the
workspace only — never through a link, never outside, each once, within the size cap."""

from __future__ import annotations

import os
from pathlib import Path

from orkas.engine.instructions import MAX_BYTES, discover


def names(root: Path, found: list) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(str(f.path.relative_to(root)), f.kind) for f in found]


def test_root_down_to_the_folder_one_file_each_nearer_later(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("root rules")
    (tmp_path / "CLAUDE.md").write_text("ignored: AGENTS.md won here")
    (tmp_path / "pkg" / "CLAUDE.md").write_text("pkg rules")  # no AGENTS.md here: CLAUDE.md wins
    (tmp_path / "pkg" / "CLAUDE.local.md").write_text("my own")
    (tmp_path / "pkg" / "sub" / ".goosehints").write_text("sub hints")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "AGENTS.md").write_text("not on the way")
    found = discover(tmp_path, tmp_path / "pkg" / "sub")
    assert names(tmp_path, found) == [
        ("AGENTS.md", "project"),
        ("pkg/CLAUDE.md", "project"),
        ("pkg/CLAUDE.local.md", "personal"),
        ("pkg/sub/.goosehints", "project"),
    ]
    assert names(tmp_path, discover(tmp_path)) == [("AGENTS.md", "project")]  # at the root: only its own
    assert discover(tmp_path, tmp_path.parent) == []  # a folder outside the workspace has none of its files


def test_imports_stay_inside_the_workspace_and_never_follow_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "home"
    (outside / ".ssh").mkdir(parents=True)
    (outside / ".ssh" / "id_rsa").write_text("SECRET KEY")
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "style.md").write_text("Use short names. See @more.md")
    (root / "docs" / "more.md").write_text("And tests. Back to @style.md")  # a cycle: each file once
    os.symlink(outside / ".ssh" / "id_rsa", root / "docs" / "key.md")
    (root / "AGENTS.md").write_text(
        "Read @docs/style.md and @../home/.ssh/id_rsa and @docs/key.md; mail me@example.org\n"
        "```\n@decorator\n```\n`@not/this.md`"
    )
    found = discover(root)
    assert names(root, found) == [("AGENTS.md", "project"), ("docs/style.md", "import"), ("docs/more.md", "import")]
    assert all("SECRET" not in f.text for f in found)


def test_a_linked_instruction_file_is_not_read_and_the_size_is_capped(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("linked rules")
    os.symlink(tmp_path / "real.md", tmp_path / "AGENTS.md")  # a link: not a file of the folder's own
    (tmp_path / "CLAUDE.md").write_text("x" * (MAX_BYTES * 2))
    found = discover(tmp_path)
    assert names(tmp_path, found) == [("CLAUDE.md", "project")]
    assert len(found[0].text) == MAX_BYTES

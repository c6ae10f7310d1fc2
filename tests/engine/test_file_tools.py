"""read_file and list_files on a real folder, confined to the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orkas.engine.abort import AbortSignal
from orkas.engine.messages import ImageBlock, TextBlock
from orkas.engine.tools.base import ToolContext, ToolResult
from orkas.engine.tools.files import MAX_ENTRIES, ListFiles, ReadFile
from tests.engine.tools_for_tests import PNG_1PX


def ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace, signal=AbortSignal(), tool_use_id="t")


def text(result: ToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextBlock)
    return block.text


async def test_reads_with_line_numbers_and_pages(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    first = await ReadFile().execute({"path": "f.txt", "max_lines": 4}, ctx(tmp_path))
    assert text(first).splitlines()[:4] == ["1\tline 1", "2\tline 2", "3\tline 3", "4\tline 4"]
    assert "\n[more available from line 5 of 10]\n[sha256: " in text(first)
    rest = await ReadFile().execute({"path": "f.txt", "start_line": 5}, ctx(tmp_path))
    assert text(rest).splitlines()[0] == "5\tline 5" and "more available" not in text(rest)


async def test_reads_an_image_as_image_content(tmp_path: Path) -> None:
    import base64

    (tmp_path / "p.png").write_bytes(base64.b64decode(PNG_1PX))
    result = await ReadFile().execute({"path": "p.png"}, ctx(tmp_path))
    assert isinstance(result.content[0], ImageBlock) and result.content[0].media_type == "image/png"


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "link/secret.txt"])
async def test_refuses_paths_outside_the_workspace(tmp_path: Path, path: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "outside.txt").write_text("secret")
    secret_dir = tmp_path / "secret"
    secret_dir.mkdir()
    (secret_dir / "secret.txt").write_text("secret")
    os.symlink(secret_dir, workspace / "link")
    result = await ReadFile().execute({"path": path}, ctx(workspace))
    assert result.is_error and text(result).startswith("access denied: ")


async def test_clear_errors_for_missing_binary_and_folders(tmp_path: Path) -> None:
    (tmp_path / "bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "d").mkdir()
    missing = await ReadFile().execute({"path": "nope.txt"}, ctx(tmp_path))
    binary = await ReadFile().execute({"path": "bin"}, ctx(tmp_path))
    folder = await ReadFile().execute({"path": "d"}, ctx(tmp_path))
    assert missing.is_error and "no such file" in text(missing)
    assert binary.is_error and "binary" in text(binary)
    assert folder.is_error and "list_files" in text(folder)


async def test_lists_files_skipping_dependency_folders(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "README.md").write_text("")
    flat = await ListFiles().execute({}, ctx(tmp_path))
    assert text(flat).splitlines() == ["src/", "README.md"]
    deep = await ListFiles().execute({"recursive": True}, ctx(tmp_path))
    assert "src/main.py" in text(deep).splitlines()
    outside = await ListFiles().execute({"path": ".."}, ctx(tmp_path))
    assert outside.is_error


async def test_listing_is_capped(tmp_path: Path) -> None:
    for i in range(MAX_ENTRIES + 5):
        (tmp_path / f"f{i}").write_text("")
    result = await ListFiles().execute({}, ctx(tmp_path))
    assert result.details == {"count": MAX_ENTRIES, "truncated": True}
    assert "listing stopped" in text(result)

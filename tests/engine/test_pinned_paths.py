"""The file tools against a folder swapped for a link while they work (issue 33's red team, attack 48–53).

A real process exchanges `d` (a real folder in the workspace) with `s` (a link to a folder standing for the
person's home) as fast as it can with renameat2(RENAME_EXCHANGE), and removes whatever lands in the real
folder, as the attacker's swapper did. Every write, delete and listing goes through the tools many times;
nothing may appear in, vanish from, or be listed out of the folder outside.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orkas.engine.abort import AbortSignal
from orkas.engine.consent import Ask
from orkas.engine.messages import TextBlock
from orkas.engine.sandbox import PathPolicy
from orkas.engine.tools.base import Tool, ToolContext, ToolResult, error_result
from orkas.engine.tools.edits import DeleteFile, EditFile, WriteFile
from orkas.engine.tools.files import GrepFiles, ListFiles, ReadFile, SearchFiles, StatFile

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="renameat2 is Linux's")

SWAPPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs("d", exist_ok=True)
os.symlink(sys.argv[1], "s")
open("swapping", "w").close()
while True:
    libc.renameat2(-100, b"d", -100, b"s", 2)  # RENAME_EXCHANGE
"""
ROUNDS = 150


async def _yes(_ask: Ask) -> bool:
    return True


def ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace, signal=AbortSignal(), tool_use_id="t", ask=_yes)


async def call(tool: Tool, input: dict[str, Any], context: ToolContext) -> ToolResult:
    """As the tool runner calls a tool: an exception becomes an error result (the race makes some)."""
    try:
        return await tool.execute(input, context)
    except Exception as e:  # the runner turns any exception into an error result
        return error_result(f"tool failed: {e}")


def text(result: ToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextBlock)
    return block.text


@pytest.fixture
def swapping(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / ".bashrc").write_text("the person's own\n")
    (home / "id_rsa").write_text("KEY\n")
    process = subprocess.Popen([sys.executable, "-c", SWAPPER, str(home)], cwd=workspace)
    try:
        while not (workspace / "swapping").exists():  # the event, not a fixed wait
            assert process.poll() is None, "the swapper died"
        yield home, workspace
    finally:
        process.kill()
        process.wait()


def policy(workspace: Path, home: Path) -> PathPolicy:
    return PathPolicy(workspace, home=home.parent / "nobody")


async def test_writes_never_land_outside_while_a_folder_is_swapped_for_a_link(swapping: tuple[Path, Path]) -> None:
    home, workspace = swapping
    tool, context = WriteFile(policy(workspace, home)), ctx(workspace)
    written, i = 0, 0
    deadline = time.monotonic() + 60  # on a busy machine the swapper may win every early round: keep going
    while i < ROUNDS or (not written and time.monotonic() < deadline):
        result = await call(tool, {"path": f"d/pwn_{i}.txt", "content": f"x{i}"}, context)
        written += not result.is_error
        i += 1
    assert sorted(p.name for p in home.iterdir()) == [".bashrc", "id_rsa"]
    assert written > 0  # the race was won some of the time: the writes that went ahead went into the workspace


async def test_an_edit_never_lands_outside(swapping: tuple[Path, Path]) -> None:
    home, workspace = swapping
    pol = policy(workspace, home)
    context = ctx(workspace)
    for _ in range(ROUNDS // 3):
        read = await call(ReadFile(pol), {"path": "d/notes.txt"}, context)
        if read.is_error:
            await call(WriteFile(pol), {"path": "d/notes.txt", "content": "start\n"}, context)
            continue
        await call(EditFile(pol), {"path": "d/notes.txt", "old_string": "start", "new_string": "begin"}, context)
    assert sorted(p.name for p in home.iterdir()) == [".bashrc", "id_rsa"]


async def test_a_delete_never_removes_a_file_outside(swapping: tuple[Path, Path]) -> None:
    home, workspace = swapping
    tool, context = DeleteFile(policy(workspace, home)), ctx(workspace)
    for _ in range(ROUNDS):
        await call(tool, {"path": "d/.bashrc"}, context)
        await call(tool, {"path": "d/id_rsa"}, context)
    assert (home / ".bashrc").read_text() == "the person's own\n" and (home / "id_rsa").exists()


async def test_listings_never_show_the_folder_outside(swapping: tuple[Path, Path]) -> None:
    home, workspace = swapping
    pol, context = policy(workspace, home), ctx(workspace)
    (home / "secret-name-only-outside").write_text("x")
    seen = []
    for _ in range(ROUNDS // 3):
        for result in await asyncio.gather(
            call(ListFiles(pol), {"path": "d"}, context),
            call(ListFiles(pol), {"path": ".", "recursive": True}, context),
            call(SearchFiles(pol), {"pattern": "*"}, context),
            call(GrepFiles(pol), {"pattern": "KEY|own", "mode": "files"}, context),
        ):
            seen.append(text(result))
    assert not any("secret-name-only-outside" in t or "id_rsa" in t or ".bashrc" in t for t in seen)


async def test_without_a_racer_the_tools_work_as_before(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pol, context = PathPolicy(workspace, home=tmp_path / "nobody"), ctx(workspace)
    wrote = await call(WriteFile(pol), {"path": "a/b/c.txt", "content": "hi"}, context)
    assert not wrote.is_error and (workspace / "a/b/c.txt").read_text() == "hi"
    (workspace / "a/b/c.txt").chmod(0o640)
    await call(ReadFile(pol), {"path": "a/b/c.txt"}, context)
    edited = await call(EditFile(pol), {"path": "a/b/c.txt", "old_string": "hi", "new_string": "ho"}, context)
    assert not edited.is_error and (workspace / "a/b/c.txt").read_text() == "ho"
    assert (workspace / "a/b/c.txt").stat().st_mode & 0o777 == 0o640  # the mode kept
    assert [p.name for p in (workspace / "a/b").iterdir()] == ["c.txt"]  # no temp file left
    listed = await call(ListFiles(pol), {"path": ".", "recursive": True}, context)
    assert text(listed).splitlines() == ["a/", "a/b/", "a/b/c.txt"]
    assert not (await call(DeleteFile(pol), {"path": "a/b/c.txt"}, context)).is_error
    assert not (workspace / "a/b/c.txt").exists()


async def _no(_ask: Ask) -> bool:
    return False


async def test_a_swap_to_a_secret_folder_inside_the_workspace_reads_nothing_secret(tmp_path: Path) -> None:
    """Second red team, B5: `sub/db.yaml` (a decoy) swapped with a link to `secrets/` (inside the workspace):
    the check passed for sub/db.yaml and the open followed the link into secrets/db.yaml. Now the open walks
    the checked folders themselves; stat_file likewise never reports on what a swapped link points to (B13)."""
    workspace = tmp_path / "ws"
    (workspace / "secrets").mkdir(parents=True)
    (workspace / "secrets" / "db.yaml").write_text('password: "FOLDER_SECRET_666x"\n')
    (workspace / "data").mkdir()
    (workspace / "data" / "vault.key").write_text("x" * 1234)
    swapper = (
        "import ctypes, os\nlibc = ctypes.CDLL(None)\nos.makedirs('sub', exist_ok=True)\n"
        "open('sub/db.yaml', 'w').write('decoy: 1\\n')\nos.symlink('secrets', 'lnk')\n"
        "open('swapping', 'w').close()\nwhile True:\n    libc.renameat2(-100, b'sub', -100, b'lnk', 2)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", swapper], cwd=workspace)
    try:
        while not (workspace / "swapping").exists():
            assert process.poll() is None
        pol = PathPolicy(workspace, home=tmp_path / "nobody")
        context = ToolContext(workspace=workspace, signal=AbortSignal(), tool_use_id="t", ask=_no)
        seen = []
        for _ in range(ROUNDS // 2):
            for result in await asyncio.gather(
                call(ReadFile(pol), {"path": "sub/db.yaml"}, context),
                call(GrepFiles(pol), {"pattern": "password", "path": "sub"}, context),
                call(StatFile(pol), {"path": "sub/db.yaml"}, context),
            ):
                seen.append(text(result))
    finally:
        process.kill()
        process.wait()
    assert not [t for t in seen if "FOLDER_SECRET_666x" in t]
    assert any("decoy" in t for t in seen)  # the reads that went ahead read the real sub/

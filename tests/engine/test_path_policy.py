"""The path policy against real files, symlinks and hard links in a temp dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orkas.engine.sandbox import PathDenied, PathPolicy


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    ws = home / "proj"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text("a")
    (ws / "sub" / "b.txt").write_text("b")
    (ws / "café.txt").write_text("c")
    (ws / "%2e%2e").mkdir()
    evil = home / "proj-evil"
    evil.mkdir()
    (evil / "x.txt").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("o")
    ssh = home / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("PRIVATE KEY")
    shared = home / "shared"
    shared.mkdir()
    (shared / "s.txt").write_text("s")
    data = home / ".orkas"
    data.mkdir()
    (data / "vault.bin").write_bytes(b"v")
    os.symlink(outside, ws / "link_out")
    os.symlink(outside / "o.txt", ws / "link_file")
    os.symlink(ws / "sub", ws / "link_in")
    os.symlink(outside, ws / "deep")
    os.symlink(ssh, ws / "to_ssh")
    os.symlink("/etc", ws / "abs_link")
    os.symlink(outside / "missing.txt", ws / "dangle")
    os.symlink(ws, shared / "back_to_ws")
    os.link(outside / "o.txt", ws / "hardlink.txt")
    return {"home": home, "ws": ws, "evil": evil, "outside": outside, "ssh": ssh, "shared": shared, "data": data}


def policy(tree: dict[str, Path]) -> PathPolicy:
    return PathPolicy(tree["ws"], granted=[tree["shared"]], protected=[tree["data"]], home=tree["home"])


ALLOWED = [
    ("a.txt", False),
    ("a.txt", True),
    ("sub/b.txt", False),
    ("newdir/new.txt", True),
    ("sub/../a.txt", False),
    ("./a.txt", False),
    ("sub/", False),
    ("sub//b.txt", True),
    (".", False),
    ("café.txt", True),
    ("link_in/b.txt", True),
    ("%2e%2e/literal.txt", True),
    ("hardlink.txt", False),
    ("{shared}/s.txt", False),
    ("{shared}/new.txt", True),
    ("{shared}/back_to_ws/a.txt", True),
    ("{ws}/a.txt", True),
]
DENIED = [
    ("../proj-evil/x.txt", False),
    ("{evil}/x.txt", False),
    ("../../outside/o.txt", False),
    ("sub/../../outside/o.txt", True),
    ("link_out/o.txt", False),
    ("link_file", False),
    ("link_file", True),
    ("deep/new.txt", True),
    ("to_ssh/id_rsa", False),
    ("~/.ssh/id_rsa", False),
    ("{ssh}/id_rsa", False),
    ("/etc/passwd", False),
    ("//etc/passwd", False),
    ("/usr/bin/env", False),
    ("/proc/self/environ", False),
    ("abs_link/passwd", False),
    ("dangle", True),
    ("a\0.txt", False),
    ("", False),
    ("hardlink.txt", True),
    ("{data}/vault.bin", False),
    ("{data}/settings.json", True),
    ("~", False),
    ("{home}", False),
    ("sub/../../proj-evil/x.txt", False),
    ("/ETC/passwd", False),
    ("{outside}", False),
    ("~/.claude/.credentials.json", False),  # other agent tools' keys, beside the skill folders Orkas reads
    ("~/.codex/auth.json", False),
]


def expand(raw: str, tree: dict[str, Path]) -> str:
    return raw.format(**{k: str(v) for k, v in tree.items()}) if "{" in raw else raw


@pytest.mark.parametrize(("raw", "write"), ALLOWED)
def test_allowed(tree: dict[str, Path], raw: str, write: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree["home"]))
    resolved = policy(tree).check(expand(raw, tree), write=write)
    assert resolved.is_absolute()


@pytest.mark.parametrize(("raw", "write"), DENIED)
def test_denied(tree: dict[str, Path], raw: str, write: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree["home"]))
    with pytest.raises(PathDenied) as info:
        policy(tree).check(expand(raw, tree), write=write)
    assert info.value.reason


def test_there_are_at_least_forty_cases() -> None:
    assert len(ALLOWED) + len(DENIED) >= 40


@pytest.mark.parametrize("target", ["{home}", "/", "{ssh}", "/etc", "{data}", "{home}/.."])
def test_places_that_can_never_be_granted(tree: dict[str, Path], target: str) -> None:
    with pytest.raises(PathDenied, match=r"never be granted|protected"):
        policy(tree).grant(expand(target, tree))


def test_a_granted_folder_opens_up(tree: dict[str, Path]) -> None:
    p = policy(tree)
    with pytest.raises(PathDenied):
        p.check(tree["outside"] / "o.txt", write=False)
    p.grant(tree["outside"])
    assert p.check(tree["outside"] / "o.txt", write=False) == tree["outside"].resolve() / "o.txt"


def test_the_home_folder_is_not_a_workspace(tree: dict[str, Path]) -> None:
    with pytest.raises(PathDenied):
        PathPolicy(tree["home"], home=tree["home"])


def test_a_symlink_swapped_in_after_the_check_is_caught(tree: dict[str, Path]) -> None:
    p = policy(tree)
    target = tree["ws"] / "swap.txt"
    target.write_text("inside")
    resolved = p.check("swap.txt", write=False)
    target.unlink()
    os.symlink(tree["outside"] / "o.txt", target)  # the race: swapped between check and open
    fd = os.open(target, os.O_RDONLY)
    try:
        with pytest.raises(PathDenied, match=r"replaced|really"):
            p.verify_open(fd, resolved)
    finally:
        os.close(fd)


# --- reading through the policy ----------------------------------------------------------------------------


@pytest.fixture
def reading(tmp_path: Path) -> tuple[PathPolicy, Path, Path]:
    from orkas.engine.sandbox import links

    links.forget()
    home = tmp_path / "home"
    ws = home / "ws"
    ws.mkdir(parents=True)
    (home / ".bash_history").write_text("export TOKEN=secret\n")
    (home / "store").mkdir()
    (home / "store" / "lib.js").write_text("module.exports = 1\n")
    return PathPolicy(ws, home=home), ws, home


def test_a_hard_link_to_a_protected_file_is_not_read(reading: tuple[PathPolicy, Path, Path]) -> None:
    policy, ws, home = reading
    os.link(home / ".bash_history", ws / "history.txt")
    with pytest.raises(PathDenied, match="hard link"):
        policy.read_bytes(ws / "history.txt")


def test_an_ordinary_hard_link_is_read(reading: tuple[PathPolicy, Path, Path]) -> None:
    """pnpm and uv fill node_modules and .venv with hard links into their stores: those must stay readable."""
    policy, ws, home = reading
    os.link(home / "store" / "lib.js", ws / "lib.js")
    assert policy.read_bytes(ws / "lib.js") == b"module.exports = 1\n"


def test_when_protected_files_cannot_all_be_checked_hard_links_are_refused(
    reading: tuple[PathPolicy, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from orkas.engine.sandbox import links

    policy, ws, home = reading
    os.link(home / "store" / "lib.js", ws / "lib.js")
    (home / ".ssh").mkdir()
    for i in range(30):
        (home / ".ssh" / f"k{i}").write_text("x")
    monkeypatch.setattr(links, "BUDGET", 10)
    links.forget()
    with pytest.raises(PathDenied, match="cannot all be checked"):
        policy.read_bytes(ws / "lib.js")
    (ws / "plain.txt").write_text("ok")
    assert policy.read_bytes(ws / "plain.txt") == b"ok"  # a file with one name needs no checking


def test_a_fifo_is_refused_without_waiting(reading: tuple[PathPolicy, Path, Path]) -> None:
    policy, ws, _home = reading
    os.mkfifo(ws / "pipe")
    with pytest.raises(PathDenied, match="not a regular file"):
        policy.read_bytes(ws / "pipe")


def test_a_source_policy_keeps_links_inside_the_source(tmp_path: Path) -> None:
    home = tmp_path / "home"
    notes = home / "notes"
    notes.mkdir(parents=True)
    (home / "private.txt").write_text("private")
    (notes / "a.md").write_text("a")
    (notes / "escape.md").symlink_to(home / "private.txt")
    policy = PathPolicy.source(notes, home=home)
    assert policy.read_bytes(notes / "a.md") == b"a"
    with pytest.raises(PathDenied):
        policy.read_bytes(notes / "escape.md")
    with pytest.raises(PathDenied):
        PathPolicy.source(home, home=home)
    single = PathPolicy.source(notes / "a.md", home=home)
    assert single.read_bytes(notes / "a.md") == b"a"

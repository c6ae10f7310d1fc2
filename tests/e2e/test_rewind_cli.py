"""Checkpoints and rewind through the CLI, with the wire fake and default settings (auto mode, so the model's
command runs confined with a writable workspace): a turn's shell command deletes, rewrites and chmods files and
makes new ones; `orkas session rewind` puts them back exactly — bytes, modes, deletions —, the conversation's tail is
kept as a version, `--undo` takes the files' rewind back; and a rewind killed mid-way leaves the workspace as it was
before the rewind began."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.attack_kit import ORKAS, Victim, script_tool_calls
from tests.fakes.server import FakeServer

COMMAND = "rm a && printf 'rewritten' > b && chmod 600 notes.md && mkdir gen && printf made > gen/new.txt"


def tree(root: Path) -> dict[str, tuple[str, int, bytes]]:
    out: dict[str, tuple[str, int, bytes]] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            info = path.lstat()
            kind = "d" if stat.S_ISDIR(info.st_mode) else "l" if stat.S_ISLNK(info.st_mode) else "f"
            content = path.read_bytes() if kind == "f" else b""
            out[str(path.relative_to(root))] = (kind, stat.S_IMODE(info.st_mode), content)
    return out


def orkas(victim: Victim, server: FakeServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ORKAS, *args], env=victim.env(server), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def ran(victim: Victim, server: FakeServer) -> tuple[str, str]:
    """One turn in auto mode: the conversation's id and the person's message's id."""
    result = victim.run(server, "--mode", "auto", "--json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    shown = next(e for e in events if e["type"] == "user_message")
    return shown["conversation"], shown["message_id"]


def test_a_shell_command_s_changes_are_rewound_exactly_and_the_rewind_undone(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    victim = Victim(tmp_path)
    (victim.workspace / "notes.md").chmod(0o644)
    before = tree(victim.workspace)
    script_tool_calls(anthropic_server, [("bash", {"command": COMMAND})])
    conversation, message = ran(victim, anthropic_server)
    after_command = tree(victim.workspace)
    assert "a" not in after_command and after_command["b"][2] == b"rewritten" and after_command["notes.md"][1] == 0o600

    listed = json.loads(orkas(victim, anthropic_server, "session", "checkpoints", conversation, "--json").stdout)
    assert [(e["message_id"], e["text"]) for e in listed] == [(message, "do the task")] and listed[0]["checkpoint"]

    preview = orkas(victim, anthropic_server, "session", "rewind", conversation, "--to", message, "--preview", "--json")
    said: dict[str, Any] = json.loads(preview.stdout)
    assert said["files"]["restore"] == ["b", "notes.md"] and said["files"]["create"] == ["a"]
    assert said["files"]["delete"] == ["gen/new.txt"] and said["applied"] is False
    assert tree(victim.workspace) == after_command  # a preview changes nothing

    rewound = orkas(victim, anthropic_server, "session", "rewind", conversation, "--to", message)
    assert rewound.returncode == 0, rewound.stderr
    assert tree(victim.workspace) == before  # bytes, modes, deletions — and the folder the command made is gone
    assert "put aside as a version: " in rewound.stdout
    again = json.loads(orkas(victim, anthropic_server, "session", "checkpoints", conversation, "--json").stdout)
    assert again == []  # the conversation is back before that message (kept as a version)

    undone = orkas(victim, anthropic_server, "session", "rewind", conversation, "--undo")
    assert undone.returncode == 0, undone.stderr
    assert tree(victim.workspace) == after_command


def test_files_only_keeps_the_conversation_and_conversation_only_keeps_the_files(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    victim = Victim(tmp_path)
    before = tree(victim.workspace)
    script_tool_calls(anthropic_server, [("bash", {"command": COMMAND})])
    conversation, message = ran(victim, anthropic_server)
    after_command = tree(victim.workspace)
    files = orkas(victim, anthropic_server, "session", "rewind", conversation, "--to", message, "--files-only")
    assert files.returncode == 0, files.stderr
    assert tree(victim.workspace) == before
    listed = json.loads(orkas(victim, anthropic_server, "session", "checkpoints", conversation, "--json").stdout)
    assert [e["message_id"] for e in listed] == [message]  # the conversation goes on
    orkas(victim, anthropic_server, "session", "rewind", conversation, "--undo")
    talk = orkas(victim, anthropic_server, "session", "rewind", conversation, "--to", message, "--conversation-only")
    assert talk.returncode == 0, talk.stderr
    assert tree(victim.workspace) == after_command  # the files stay
    missing = orkas(victim, anthropic_server, "session", "rewind", conversation, "--to", "nope")
    assert missing.returncode == 2 and "not one of yours" in missing.stderr


@pytest.mark.parametrize("attempt", range(3))
def test_a_rewind_killed_mid_way_leaves_the_workspace_as_it_was_before_it(
    anthropic_server: FakeServer, tmp_path: Path, attempt: int
) -> None:
    victim = Victim(tmp_path)
    data = victim.workspace / "data"
    data.mkdir()
    for i in range(1500):
        (data / f"f{i}.bin").write_bytes(os.urandom(16_000))
    script_tool_calls(anthropic_server, [("bash", {"command": "for f in data/*; do printf changed > $f; done; rm b"})])
    conversation, message = ran(victim, anthropic_server)
    before_rewind = tree(victim.workspace)
    process = subprocess.Popen(
        [ORKAS, "session", "rewind", conversation, "--to", message, "--files-only"],
        env=victim.env(anthropic_server),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    spaces = victim.data / "checkpoints" / "spaces"
    wanted = "checkpointing" if attempt == 0 else "applying"  # killed while it copies "now", or while it writes
    deadline = time.monotonic() + 60
    journal: Path | None = None
    while process.poll() is None and time.monotonic() < deadline:
        journal = journal or next(spaces.glob("*/rewind.json"), None)
        try:
            if journal is not None and json.loads(journal.read_text())["state"] == wanted:
                break
        except (OSError, ValueError):
            continue  # being replaced: read again
    if attempt == 2:
        time.sleep(0.005)  # a little into the writing
    process.send_signal(signal.SIGKILL)
    process.wait()
    state = json.loads(journal.read_text())["state"] if journal is not None and journal.exists() else "done"
    listed = orkas(victim, anthropic_server, "session", "checkpoints", conversation)  # any use finishes the story
    assert listed.returncode == 0, listed.stderr
    now = tree(victim.workspace)
    if state == "done":  # it finished before the kill: rewound whole
        assert now["b"][2] == b"two\n" and now["data/f0.bin"][2] != b"changed"
    else:
        assert now == before_rewind, state

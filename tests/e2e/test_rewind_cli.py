"""Checkpoints and rewind through the CLI, with the wire fake and default settings (auto mode, so the model's
command runs confined with a writable workspace): a turn's shell command deletes, rewrites and chmods files and
makes new ones; `orkas session rewind` puts them back exactly — bytes, modes, deletions —, the conversation's tail is
kept as a version, `--undo` takes the files' rewind back; and a rewind killed mid-way leaves the workspace as it was
before the rewind began."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.attack_kit import ORKAS, Victim, script_tool_calls
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer
from tests.folder_tree import tree

COMMAND = "rm a && printf 'rewritten' > b && chmod 600 notes.md && mkdir gen && printf made > gen/new.txt"


def big_folder(victim: Victim) -> None:
    """1,500 files of 16 KB: a rewind of them all takes long enough to be caught in the middle."""
    data = victim.workspace / "data"
    data.mkdir()
    for i in range(1500):
        (data / f"f{i}.bin").write_bytes(os.urandom(16_000))


def rewinding(victim: Victim, server: FakeServer, conversation: str, message: str) -> subprocess.Popen[str]:
    """`orkas session rewind … --files-only`, started and left running."""
    command = [ORKAS, "session", "rewind", conversation, "--to", message, "--files-only"]
    return subprocess.Popen(command, env=victim.env(server), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def journal_says(victim: Victim, process: subprocess.Popen[str], state: str) -> Path | None:
    """Wait until the rewind's journal says `state` (or the rewind ended); the journal's path, once it was seen."""
    spaces = victim.data / "checkpoints" / "spaces"
    deadline = time.monotonic() + 60
    journal: Path | None = None
    while process.poll() is None and time.monotonic() < deadline:
        journal = journal or next(spaces.glob("*/rewind.json"), None)
        try:
            if journal is not None and json.loads(journal.read_text())["state"] == state:
                break
        except (OSError, ValueError):
            continue  # being replaced: read again
    return journal


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
    big_folder(victim)
    script_tool_calls(anthropic_server, [("bash", {"command": "printf changed | tee data/* > /dev/null && rm b"})])
    conversation, message = ran(victim, anthropic_server)
    before_rewind = tree(victim.workspace)
    assert before_rewind["data/f0.bin"][2] == b"changed" and "b" not in before_rewind  # the command ran
    process = rewinding(victim, anthropic_server, conversation, message)
    wanted = "checkpointing" if attempt == 0 else "applying"  # killed while it copies "now", or while it writes
    journal = journal_says(victim, process, wanted)
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


def test_another_chat_in_the_same_folder_waits_for_a_rewind_and_never_rolls_it_back(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    victim = Victim(tmp_path)
    big_folder(victim)
    script_tool_calls(anthropic_server, [("bash", {"command": "printf changed | tee data/* > /dev/null"})])
    conversation, message = ran(victim, anthropic_server)
    anthropic_server.script(a_wire.reply_text("second chat"))
    other, _ = ran(victim, anthropic_server)  # another chat, same folder
    target = tree(victim.workspace)
    assert target["data/f0.bin"][2] == b"changed", "the command ran"
    process = rewinding(victim, anthropic_server, conversation, message)
    journal_says(victim, process, "applying")
    listed = orkas(victim, anthropic_server, "session", "checkpoints", other)  # waits for the rewind's lock
    _out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert listed.returncode == 0, listed.stderr
    now = tree(victim.workspace)
    assert all(now[f"data/f{i}.bin"][2] != b"changed" for i in range(1500))  # the whole rewind, not half of it
    assert now != target


def test_undo_can_be_previewed_and_is_itself_undoable(anthropic_server: FakeServer, tmp_path: Path) -> None:
    victim = Victim(tmp_path)
    script_tool_calls(anthropic_server, [("bash", {"command": COMMAND})])
    conversation, message = ran(victim, anthropic_server)
    assert (
        orkas(victim, anthropic_server, "session", "rewind", conversation, "--to", message, "--files-only").returncode
        == 0
    )
    rewound = tree(victim.workspace)
    (victim.workspace / "after.txt").write_text("made after the rewind")
    preview = orkas(victim, anthropic_server, "session", "rewind", conversation, "--undo", "--preview", "--json")
    said = json.loads(preview.stdout)
    assert said["applied"] is False and "after.txt" in said["files"]["delete"]
    assert (victim.workspace / "after.txt").exists()  # a preview changes nothing
    assert orkas(victim, anthropic_server, "session", "rewind", conversation, "--undo").returncode == 0
    assert not (victim.workspace / "after.txt").exists()
    assert orkas(victim, anthropic_server, "session", "rewind", conversation, "--undo").returncode == 0  # the undo's
    assert tree(victim.workspace) == {**rewound, "after.txt": ("f", 0o644, b"made after the rewind")}

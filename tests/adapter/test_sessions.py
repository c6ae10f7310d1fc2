"""Persistent JSONL sessions on a real file system."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from orkas.adapter.conversations.sessions import PersistentSession, SessionStore, encode_line, load
from orkas.core.errors import ConfigError, PairingError
from orkas.engine.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from orkas.engine.repair import INTERRUPTED
from tests.engine.helpers import collect, make_agent
from tests.fakes.scripted import ScriptedProvider, text, tool_call
from tests.validators import anthropic_violations


def user(t: str = "hi") -> UserMessage:
    return UserMessage(content=(TextBlock(text=t),))


def reply(t: str = "ok") -> AssistantMessage:
    return AssistantMessage(content=(TextBlock(text=t),), provider="p", model="m")


def call(i: str) -> AssistantMessage:
    return AssistantMessage(content=(ToolUseBlock(id=i, name="echo", input={}),), provider="p", model="m")


async def test_each_append_is_one_line_on_disk_before_it_returns(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create()
    first, second = user("héllo 中文"), reply()
    await session.append(first)
    assert session.path.read_bytes() == encode_line(first)
    await session.append(second)
    lines = session.path.read_bytes().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["model"] == "m" and json.loads(lines[1])["v"] == 1
    session.close()
    loaded, report = SessionStore(tmp_path).open(session.id)
    assert list(loaded.messages()) == [first, second] and not report.changed


async def test_a_pairing_violation_writes_nothing(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create()
    await session.append(user())
    await session.append(call("a"))
    size = session.path.stat().st_size
    with pytest.raises(PairingError):
        await session.append(user("skipping the result"))
    assert session.path.stat().st_size == size and len(session.messages()) == 2


async def test_a_torn_last_line_is_dropped_and_the_next_append_is_clean(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create()
    await session.append(user())
    await session.append(reply())
    session.close()
    data = session.path.read_bytes()
    torn = encode_line(user("torn"))[:17]
    session.path.write_bytes(data + torn)
    loaded, report = store.open(session.id)
    assert report.torn_tail_bytes == 17 and report.rewritten and len(loaded.messages()) == 2
    await loaded.append(user("next"))
    loaded.close()
    again, report2 = store.open(session.id)
    assert [m.role for m in again.messages()] == ["user", "assistant", "user"] and not report2.changed
    assert (tmp_path / f"{session.id}.corrupt.jsonl").read_bytes() == torn + b"\n"


async def test_corrupt_lines_are_skipped_reported_and_kept_aside(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    good = [user(), reply()]
    path.write_bytes(
        encode_line(good[0])
        + b'{"v": 1, "role": "user", "content": [{"type": "wat"}]}\n'
        + b"\xff\xfe not json\n"
        + encode_line(good[1])
    )
    session, report = load(path)
    assert list(session.messages()) == good
    assert [c["line"] for c in report.corrupt_lines] == [2, 3]
    assert (tmp_path / "s1.corrupt.jsonl").read_bytes().count(b"\n") == 2


async def test_load_repairs_orphans_and_the_repair_is_written_back(tmp_path: Path) -> None:
    path = tmp_path / "s2.jsonl"
    path.write_bytes(encode_line(user()) + encode_line(call("a")))
    session, report = load(path)
    assert report.repair.synthesized == ["a"] and report.rewritten
    last = session.messages()[-1]
    assert isinstance(last, UserMessage) and last.content[0] == ToolResultBlock(
        tool_use_id="a", content=(TextBlock(text=INTERRUPTED),), is_error=True
    )
    _, second = load(path)
    assert not second.changed  # idempotent on disk too
    assert anthropic_violations(list(session.messages())) == []


async def test_rewrite_is_atomic_and_checked(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create()
    for m in (user(), reply(), user("again"), reply("again")):
        await session.append(m)
    await session.rewrite([user("summary"), reply("kept")])
    assert [json.loads(line)["content"][0]["text"] for line in session.path.read_bytes().splitlines()] == [
        "summary",
        "kept",
    ]
    with pytest.raises(PairingError):
        await session.rewrite([user(), call("x"), user()])
    assert len(session.messages()) == 2
    assert not list(tmp_path.glob(".*.tmp"))  # no temp file left behind


def test_session_ids_cannot_escape_the_folder(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    for bad in ("../x", "a/b", "", "x" * 65):
        with pytest.raises(ConfigError, match="invalid session id"):
            store.path(bad)
    with pytest.raises(ConfigError, match="no session 'nope'"):
        store.open("nope")


async def test_a_run_on_a_persistent_session_survives_reload(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    from tests.engine.tools_for_tests import Echo

    provider = ScriptedProvider(tool_call("echo", {"text": "x"}), text("done"))
    store = SessionStore(tmp_path / "sessions")
    session = store.create()
    await collect(make_agent(provider, tmp_path / "ws", tools=[Echo()]), session=session)
    session.close()
    loaded, report = store.open(session.id)
    assert list(loaded.messages()) == list(session.messages()) and not report.changed
    assert [m.role for m in loaded.messages()] == ["user", "assistant", "user", "assistant"]


FULL_DISK = textwrap.dedent("""
    import asyncio, resource, signal, sys
    from pathlib import Path
    from orkas.adapter.conversations.sessions import SessionStore
    from orkas.engine.messages import TextBlock, UserMessage, AssistantMessage

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # report EFBIG instead of dying
    resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))

    async def main():
        session = SessionStore(Path(sys.argv[1])).create()
        ok = 0
        try:
            for i in range(100):
                m = UserMessage(content=(TextBlock(text="x" * 400),)) if i % 2 == 0 else \\
                    AssistantMessage(content=(TextBlock(text="y" * 400),), provider="p", model="m")
                await session.append(m)
                ok += 1
        except OSError as e:
            print(session.id, ok, len(session.messages()), e.errno)

    asyncio.run(main())
""")


def test_a_full_disk_is_an_error_the_caller_sees_and_the_file_stays_valid(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    session_id, ok, in_memory, errno = result.stdout.split()
    # A short write (ENOSPC, rolled back) or EFBIG: either way the caller saw it.
    assert int(ok) == int(in_memory) > 0 and int(errno) in (27, 28)
    loaded, report = SessionStore(tmp_path).open(session_id)
    assert len(loaded.messages()) == int(ok) and report.torn_tail_bytes == 0 and not report.corrupt_lines


def test_persistent_session_satisfies_the_protocol(tmp_path: Path) -> None:
    from orkas.engine.session import Session

    session: Session = PersistentSession(tmp_path / "x.jsonl")
    assert session.id == "x"

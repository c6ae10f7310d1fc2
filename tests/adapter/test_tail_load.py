"""Large transcripts open tail first, and the repairs a crash needs still land on disk."""

from __future__ import annotations

from pathlib import Path

from orkas.adapter.conversations.sessions import load
from orkas.adapter.conversations.transcript import NOT_LOADED, encode_line
from orkas.engine.messages import (
    AssistantMessage,
    Message,
    Notice,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from orkas.engine.pinned import PinnedState
from orkas.engine.repair import INTERRUPTED
from tests.validators import anthropic_violations

TAIL = 4096


def turn(i: int) -> list[Message]:
    call = AssistantMessage(
        content=(ToolUseBlock(id=f"t{i}", name="read_file", input={"path": f"{i}.txt"}),), provider="p", model="m"
    )
    result = UserMessage(content=(ToolResultBlock(tool_use_id=f"t{i}", content=(TextBlock(text="data " * 60),)),))
    answer = AssistantMessage(content=(TextBlock(text=f"answer {i}"),), provider="p", model="m")
    return [UserMessage(content=(TextBlock(text=f"question {i}"),)), call, result, answer]


def write(path: Path, messages: list[Message], extra: bytes = b"") -> None:
    path.write_bytes(b"".join(encode_line(m) for m in messages) + extra)


def test_a_large_transcript_loads_from_the_start_of_a_turn(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    history = [m for i in range(60) for m in turn(i)]
    write(path, history)
    session, report = load(path, tail_bytes=TAIL)
    loaded = list(session.messages())
    assert isinstance(loaded[0], Notice) and loaded[0].kind == NOT_LOADED
    assert isinstance(loaded[1], UserMessage) and loaded[1].content[0].text.startswith("question")  # type: ignore[union-attr]
    assert loaded[1:] == history[-(len(loaded) - 1) :]
    assert 0 < report.not_loaded_bytes < path.stat().st_size and not report.rewritten
    assert anthropic_violations(loaded) == []


def test_a_crash_at_the_end_is_repaired_in_place(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    history = [m for i in range(60) for m in turn(i)]
    dangling = AssistantMessage(content=(ToolUseBlock(id="last", name="read_file", input={}),), provider="p", model="m")
    write(path, [*history, UserMessage(content=(TextBlock(text="one more"),)), dangling], extra=b'{"v":1,"id":"to')
    size_before = path.stat().st_size
    session, report = load(path, tail_bytes=TAIL)
    assert report.torn_tail_bytes == 15 and report.repair.synthesized == ["last"] and report.rewritten
    last = session.messages()[-1]
    assert isinstance(last, UserMessage) and last.content[0] == ToolResultBlock(
        tool_use_id="last", content=(TextBlock(text=INTERRUPTED),), is_error=True
    )
    assert path.stat().st_size > size_before - 15  # truncated, then the results appended
    again, second = load(path, tail_bytes=TAIL)
    assert not second.changed and list(again.messages())[1:] == list(session.messages())[1:]
    full, _ = load(path, tail_bytes=10**9, write_back=False)
    assert anthropic_violations(list(full.messages())) == []


def test_corruption_inside_the_tail_falls_back_to_a_full_load(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    history = [m for i in range(60) for m in turn(i)]
    data = b"".join(encode_line(m) for m in history)
    cut = len(data) - 1000
    cut = data.index(b"\n", cut) + 1
    path.write_bytes(data[:cut] + b"{not json}\n" + data[cut:])
    session, report = load(path, tail_bytes=TAIL)
    assert len(report.corrupt_lines) == 1 and report.not_loaded_bytes == 0 and report.rewritten
    assert list(session.messages()) == history


def test_a_compacted_transcript_keeps_its_summary_when_loaded_tail_first(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    state = PinnedState(task="Migrate the database", summary="Tables a and b are done.", compactions=2)
    history = [m for i in range(60) for m in turn(i)]
    write(path, [state.to_notice(), *history])
    session, _ = load(path, tail_bytes=TAIL)
    opening = session.messages()[2]
    assert isinstance(opening, UserMessage)
    text = opening.content[0].text  # type: ignore[union-attr]
    assert "Migrate the database" in text and "Tables a and b are done." in text

"""Orphan repair: every case of seed 000, and idempotence on random broken histories."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from orkas.engine.codec import decode, encode
from orkas.engine.messages import (
    AssistantMessage,
    ImageBlock,
    Message,
    Notice,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from orkas.engine.repair import INTERRUPTED, repair
from orkas.engine.session import InMemorySession
from tests.validators import anthropic_violations


def call(*ids: str) -> AssistantMessage:
    return AssistantMessage(
        content=tuple(ToolUseBlock(id=i, name="t", input={"n": i}) for i in ids), provider="p", model="m"
    )


def results(*ids: str, text: str = "") -> UserMessage:
    blocks = [ToolResultBlock(tool_use_id=i, content=(TextBlock(text=f"r{i}"),)) for i in ids]
    return UserMessage(content=(*blocks, *([TextBlock(text=text)] if text else [])))


def user(text: str = "hi") -> UserMessage:
    return UserMessage(content=(TextBlock(text=text),))


def answer(text: str = "ok") -> AssistantMessage:
    return AssistantMessage(content=(TextBlock(text=text),), provider="p", model="m")


def result_ids(message: Message) -> list[str]:
    assert isinstance(message, UserMessage)
    return [b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)]


def test_a_clean_history_is_untouched() -> None:
    history = [user(), call("a", "b"), results("a", "b"), answer(), Notice(kind="n", text="x")]
    fixed, report = repair(history)
    assert fixed == history and not report.changed


def test_a_call_without_result_gets_an_interrupted_error() -> None:
    fixed, report = repair([user(), call("a", "b")])
    assert report.synthesized == ["a", "b"]
    last = fixed[-1]
    assert isinstance(last, UserMessage) and result_ids(last) == ["a", "b"]
    assert all(b.is_error and b.content == (TextBlock(text=INTERRUPTED),) for b in last.content)  # type: ignore[union-attr]


def test_a_partial_parallel_batch_is_completed_in_declared_order() -> None:
    fixed, report = repair([user(), call("a", "b", "c"), results("b")])
    assert result_ids(fixed[2]) == ["a", "b", "c"] and report.synthesized == ["a", "c"]


def test_results_out_of_order_are_reordered() -> None:
    fixed, report = repair([user(), call("a", "b"), results("b", "a"), answer()])
    assert result_ids(fixed[2]) == ["a", "b"] and report.reordered == 1 and not report.synthesized


def test_split_results_are_merged() -> None:
    fixed, report = repair([user(), call("a", "b"), results("a"), results("b"), answer()])
    assert len(fixed) == 4 and result_ids(fixed[2]) == ["a", "b"] and report.merged_messages == 1


def test_orphan_and_duplicate_results_are_dropped() -> None:
    history = [user(), results("ghost", text="hello"), call("a"), results("a", "zz"), results("a"), answer()]
    fixed, report = repair(history)
    assert report.dropped_orphans == ["ghost", "zz"] and report.dropped_duplicates == ["a"]
    assert fixed[1] == UserMessage(
        content=(TextBlock(text="hello"),), id=history[1].id, created_at=history[1].created_at
    )
    assert result_ids(fixed[3]) == ["a"]


def test_a_message_that_held_only_orphans_disappears() -> None:
    orphan = results("ghost")
    fixed, report = repair([user(), orphan, answer()])
    assert orphan.id in report.dropped_messages and len(fixed) == 2


def test_user_text_typed_after_a_crash_follows_the_synthesized_results() -> None:
    fixed, _ = repair([user(), call("a"), user("are you there?"), answer()])
    merged = fixed[2]
    assert isinstance(merged, UserMessage) and result_ids(merged) == ["a"]
    assert merged.content[-1] == TextBlock(text="are you there?")


def test_notices_between_a_call_and_its_results_move_after_them() -> None:
    note = Notice(kind="status", text="saving")
    fixed, report = repair([user(), call("a"), note, results("a")])
    assert fixed[2:] == [results_like(fixed[2]), note] and report.moved_notices == 1


def results_like(message: Message) -> Message:
    assert isinstance(message, UserMessage) and result_ids(message) == ["a"]
    return message


def test_duplicate_message_ids_keep_the_first() -> None:
    first = user()
    fixed, report = repair([first, first, answer()])
    assert len(fixed) == 2 and report.dropped_messages == [first.id]


def test_codec_round_trips_every_block_kind() -> None:
    message = AssistantMessage(
        content=(
            ThinkingBlock(text="hmm", signature="sig"),
            ThinkingBlock(text="", signature="opaque", redacted=True),
            TextBlock(text="中文 and text"),
            ToolUseBlock(id="x", name="read_file", input={"path": "a", "n": [1, 2]}),
        ),
        provider="anthropic",
        model="claude-x",
        stop_reason="tool_use",
        usage=Usage(input_tokens=1, output_tokens=2, cache_read_tokens=3, cache_write_tokens=4),
        partial=True,
        provider_details={"k": "v"},
    )
    result = UserMessage(
        content=(
            ToolResultBlock(
                tool_use_id="x",
                content=(TextBlock(text="t"), ImageBlock(data="AAAA", media_type="image/png")),
                is_error=True,
            ),
        )
    )
    for m in (message, result, Notice(kind="k", text="t"), user()):
        assert decode(encode(m)) == m


# --- random broken histories ------------------------------------------------------------------------

IDS = st.sampled_from(["a", "b", "c", "d"])


@st.composite
def broken_histories(draw: st.DrawFn) -> list[Message]:
    parts: list[Message] = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["user", "call", "results", "answer", "notice"]))
        if kind == "user":
            parts.append(user(draw(st.sampled_from(["q", "more", "stop"]))))
        elif kind == "call":
            parts.append(call(*draw(st.lists(IDS, min_size=1, max_size=3, unique=True))))
        elif kind == "results":
            parts.append(results(*draw(st.lists(IDS, min_size=1, max_size=3)), text=draw(st.sampled_from(["", "x"]))))
        elif kind == "answer":
            parts.append(answer())
        else:
            parts.append(Notice(kind="n", text="x"))
    return parts


@settings(max_examples=400, deadline=None)
@given(broken_histories())
def test_repair_makes_any_history_valid_and_is_idempotent(history: list[Message]) -> None:
    # Call ids must be unique across a real history; make them so, as providers do.
    seen: dict[str, int] = {}
    renamed: list[Message] = []
    for message in history:
        if isinstance(message, AssistantMessage) and message.tool_uses:
            blocks = []
            for block in message.content:
                assert isinstance(block, ToolUseBlock)
                seen[block.id] = seen.get(block.id, 0) + 1
                blocks.append(ToolUseBlock(id=f"{block.id}{seen[block.id]}", name=block.name, input=block.input))
            message = AssistantMessage(content=tuple(blocks), provider="p", model="m")
        elif isinstance(message, UserMessage):
            message = UserMessage(
                content=tuple(
                    ToolResultBlock(tool_use_id=f"{b.tool_use_id}{seen.get(b.tool_use_id, 1)}", content=b.content)
                    if isinstance(b, ToolResultBlock)
                    else b
                    for b in message.content
                )
            )
        renamed.append(message)

    fixed, _ = repair(renamed)
    again, report = repair(fixed)
    assert again == fixed and not report.changed  # idempotent
    InMemorySession(history=fixed)  # the pairing check accepts every append
    llm = [m for m in fixed if not isinstance(m, Notice)]
    assert anthropic_violations(llm, allow_leading_assistant=True) == []

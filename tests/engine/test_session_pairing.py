"""The pairing invariant on the in-memory session and the provider-boundary conversion."""

from __future__ import annotations

import pytest

from orkas.core.errors import PairingError
from orkas.engine.convert import IMAGE_OMITTED, to_llm_messages
from orkas.engine.messages import (
    AssistantMessage,
    ImageBlock,
    Notice,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from orkas.engine.providers.base import Capabilities
from orkas.engine.session import InMemorySession


def call(*ids: str) -> AssistantMessage:
    return AssistantMessage(
        content=tuple(ToolUseBlock(id=i, name="t", input={}) for i in ids),
        provider="p",
        model="m",
        stop_reason="tool_use",
    )


def results(*ids: str, extra: tuple[TextBlock, ...] = ()) -> UserMessage:
    return UserMessage(content=(*(ToolResultBlock(tool_use_id=i, content=(TextBlock(text="r"),)) for i in ids), *extra))


def user(text: str = "hi") -> UserMessage:
    return UserMessage(content=(TextBlock(text=text),))


async def test_a_paired_history_is_accepted() -> None:
    session = InMemorySession()
    for message in [
        user(),
        call("a", "b"),
        results("a", "b", extra=(TextBlock(text="steer"),)),
        AssistantMessage(content=(TextBlock(text="done"),), provider="p", model="m"),
        Notice(kind="info", text="saved"),
    ]:
        await session.append(message)
    assert len(session.messages()) == 5


@pytest.mark.parametrize(
    ("history", "bad", "match"),
    [
        ([user(), call("a")], user("ignored the call"), "need their results first"),
        ([user(), call("a", "b")], results("b", "a"), "in that order"),
        ([user(), call("a", "b")], results("a"), "need their results first"),
        ([user(), call("a")], results("a", "zzz"), "need their results"),
        ([user()], results("a"), "answer no pending tool call"),
        ([user(), call("a")], call("b"), "still waiting"),
        ([user(), call("a")], Notice(kind="x", text="y"), "cannot come between"),
        ([user()], call("a", "a"), "duplicate tool call ids"),
        (
            [user(), call("a")],
            UserMessage(content=(TextBlock(text="t"), ToolResultBlock(tool_use_id="a", content=()))),
            "in that order",
        ),
    ],
)
async def test_breaking_appends_are_refused_and_keep_nothing(history: list, bad: object, match: str) -> None:
    session = InMemorySession(history=history)
    with pytest.raises(PairingError, match=match):
        await session.append(bad)  # type: ignore[arg-type]
    assert list(session.messages()) == history


def test_a_broken_history_cannot_be_loaded_into_memory() -> None:
    with pytest.raises(PairingError):
        InMemorySession(history=[user(), call("a"), user()])


def test_conversion_drops_notices_and_foreign_reasoning() -> None:
    thinking = ThinkingBlock(text="hmm", signature="s")
    history = [
        user(),
        Notice(kind="status", text="app only"),
        AssistantMessage(content=(thinking, TextBlock(text="hello")), provider="anthropic", model="claude-a"),
        user("more"),
        AssistantMessage(content=(thinking,), provider="anthropic", model="claude-a"),
        user("again"),
    ]
    same = to_llm_messages(history, Capabilities(), provider="anthropic", model="claude-a")
    assert len(same) == 5 and same[1].content[0] == thinking
    other = to_llm_messages(history, Capabilities(), provider="openai", model="gpt-x")
    assert [m.role for m in other] == ["user", "assistant", "user", "user"]  # reasoning-only reply dropped
    assert other[1].content == (TextBlock(text="hello"),)
    assert history[2].content[0] == thinking  # the stored history is untouched


def test_conversion_for_a_model_without_images() -> None:
    image = ImageBlock(data="AAAA", media_type="image/png")
    history = [
        UserMessage(content=(TextBlock(text="see"), image)),
        call("a"),
        UserMessage(content=(ToolResultBlock(tool_use_id="a", content=(image,)),)),
    ]
    out = to_llm_messages(history, Capabilities(images=False), provider="p", model="m")
    assert out[0].content[1] == TextBlock(text=IMAGE_OMITTED)
    result = out[2].content[0]
    assert isinstance(result, ToolResultBlock) and result.content == (TextBlock(text=IMAGE_OMITTED),)
    assert len(out[2].content) == 1

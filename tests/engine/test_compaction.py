"""Compaction mechanics: safe cuts, the no-gain guard, giving up after failures, pinned state."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from orkas.adapter.conversations.sessions import SessionStore
from orkas.core.errors import ProviderError
from orkas.engine.compaction import mask, tail_start
from orkas.engine.events import Compaction, Done, RunWarning
from orkas.engine.messages import AssistantMessage, Message, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from orkas.engine.pinned import STATE_KIND, PinnedState
from orkas.engine.session import InMemorySession
from tests.engine.helpers import collect, make_agent
from tests.engine.tools_for_tests import Echo
from tests.fakes.scripted import ScriptedProvider, text, tool_call


def group(i: int, size: int) -> list[Message]:
    call = AssistantMessage(content=(ToolUseBlock(id=f"c{i}", name="echo", input={"i": i}),), provider="p", model="m")
    result = UserMessage(content=(ToolResultBlock(tool_use_id=f"c{i}", content=(TextBlock(text="w " * size),)),))
    return [call, result]


def random_history(rng: random.Random) -> list[Message]:
    history: list[Message] = [UserMessage(content=(TextBlock(text="start"),))]
    for i in range(rng.randint(1, 30)):
        roll = rng.random()
        if roll < 0.6:
            history += group(i, rng.randint(1, 400))
        elif roll < 0.8:
            history.append(
                AssistantMessage(content=(TextBlock(text="ok " * rng.randint(1, 50)),), provider="p", model="m")
            )
            history.append(UserMessage(content=(TextBlock(text="more"),)))
        else:
            history.append(AssistantMessage(content=(TextBlock(text="done"),), provider="p", model="m"))
            history.append(UserMessage(content=(TextBlock(text="next"),)))
    return history


@pytest.mark.parametrize("seed", range(40))
def test_the_cut_never_splits_a_tool_call_from_its_results(seed: int) -> None:
    rng = random.Random(seed)
    history = random_history(rng)
    for keep in (0, 50, 300, 1000, 100_000):
        cut = tail_start(history, keep)
        if cut == 0:
            continue
        before = history[cut - 1]
        assert not (isinstance(before, AssistantMessage) and before.tool_uses), (seed, keep, cut)
        tail = history[cut:]
        assert not (isinstance(tail[0], UserMessage) and isinstance(tail[0].content[0], ToolResultBlock))


def test_masking_replaces_big_outputs_and_keeps_small_ones() -> None:
    head = [UserMessage(content=(TextBlock(text="go"),)), *group(1, 1000), *group(2, 5)]
    masked = mask(head)
    big = masked[2].content[0]
    small = masked[4]
    assert isinstance(big, ToolResultBlock) and "masked to save context" in big.content[0].text  # type: ignore[union-attr]
    assert small is head[4]  # untouched messages are the same objects
    assert head[2].content[0].content[0].text.startswith("w w")  # type: ignore[union-attr]  # the input is not mutated


async def test_a_huge_output_in_the_tail_is_shrunk_not_summarized(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    huge = "line of output\n" * 6000
    session = SessionStore(tmp_path).create()
    provider = ScriptedProvider(tool_call("echo", {"text": "line of output\n", "times": 6000}), text("done"))
    with caplog.at_level("INFO", logger="orkas.engine.compaction"):
        events = await collect(make_agent(provider, tmp_path, tools=[Echo()], context_window=16_000), session=session)
    assert any(r.getMessage().startswith(f"compacted session {session.id} by shrink:") for r in caplog.records)
    shrink = [e for e in events if isinstance(e, Compaction)]
    assert [c.method for c in shrink] == ["shrink"] and isinstance(events[-1], Done)
    warning = next(e for e in events if isinstance(e, RunWarning))
    saved = Path(warning.message.rsplit("saved as ", 1)[1].rstrip(")"))
    assert saved.read_text() == huge  # the full output stays retrievable
    sent = provider.requests[-1].messages[2].content[0]
    assert isinstance(sent, ToolResultBlock) and "characters omitted" in sent.content[0].text  # type: ignore[union-attr]
    assert len(provider.requests) == 2  # no summary call was made
    session.close()


async def test_compaction_gives_up_after_three_consecutive_failures(tmp_path: Path) -> None:
    wall = UserMessage(content=(TextBlock(text="a long pasted document " * 1500),))
    answer = AssistantMessage(content=(TextBlock(text="read it"),), provider="scripted", model="scripted-model")
    fail = [ProviderError("summary refused", kind="bad_request", status=400)]
    provider = ScriptedProvider(
        fail,
        tool_call("echo", {"text": "1"}),
        fail,
        tool_call("echo", {"text": "2"}),
        fail,
        tool_call("echo", {"text": "3"}),
        tool_call("echo", {"text": "4"}),  # no fourth attempt before this call
        text("done"),
    )
    session = InMemorySession(history=[wall, answer])
    events = await collect(make_agent(provider, tmp_path, tools=[Echo()], context_window=12_000), session=session)
    warnings = [e.message for e in events if isinstance(e, RunWarning)]
    assert warnings == ["could not summarize the earlier conversation: summary refused"] * 3
    assert isinstance(events[-1], Done) and not [e for e in events if isinstance(e, Compaction)]
    provider.verify()


def test_pinned_state_merges_across_compactions() -> None:
    first = PinnedState()
    head = [
        UserMessage(content=(TextBlock(text="Build the report"),)),
        AssistantMessage(
            content=(ToolUseBlock(id="a", name="read_file", input={"path": "data.csv"}),), provider="p", model="m"
        ),
        UserMessage(
            content=(
                ToolResultBlock(tool_use_id="a", content=(TextBlock(text="x"),)),
                TextBlock(text="Use euros, not dollars."),
            )
        ),
        AssistantMessage(
            content=(TextBlock(text="Plan:\n- [x] read data\n- [ ] draw chart\n- [ ] write summary"),),
            provider="p",
            model="m",
        ),
    ]
    first.absorb(head, "Build the report")
    first.compactions = 1
    notice = first.to_notice()
    assert notice.kind == STATE_KIND
    second = PinnedState.from_history([notice])
    second.absorb(
        [
            AssistantMessage(
                content=(ToolUseBlock(id="b", name="write_file", input={"path": "report.md"}),), provider="p", model="m"
            )
        ],
        "a later task",
    )
    assert second.task == "Build the report"  # the first task stays
    assert second.user_notes == ["Use euros, not dollars."]
    assert second.files == {"data.csv": ["read"], "report.md": ["wrote"]}
    assert second.todos == ["draw chart", "write summary"]
    rendered = second.render()
    assert "Build the report" in rendered and "Use euros, not dollars." in rendered and "- [ ] draw chart" in rendered

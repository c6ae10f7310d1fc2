"""The Markdown export reads as the app shows a conversation: a question before the call it was about, its answer
in words (not the app's own `allow_once`) with who gave it; a group's commander is Orkas, and a Stop is said."""

from __future__ import annotations

from orkas.adapter.conversations.export import as_markdown
from orkas.engine.messages import AssistantMessage, Notice, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage


def approval(tool_use_id: str, decision: str, by: str = "", closed: str = "") -> Notice:
    facts = {
        "question": "q",
        "tool_use_id": tool_use_id,
        "tool": "bash",
        "decision": decision,
        "by": by,
        "closed": closed,
    }
    return Notice(kind="approval", text="touch made.txt", detail=facts)


def test_a_question_is_read_before_its_call_and_its_answer_in_words() -> None:
    call = ToolUseBlock(id="t1", name="bash", input={"command": "touch made.txt"})
    messages = [
        UserMessage(content=(TextBlock(text="make it"),)),
        AssistantMessage(content=(call,), provider="p", model="m"),
        UserMessage(content=(ToolResultBlock(tool_use_id="t1", content=(TextBlock(text="done"),)),)),
        approval("t1", "allow_once", by="Pixel"),  # kept after the result: the transcript takes no notice before
        AssistantMessage(content=(TextBlock(text="Made it."),), provider="p", model="m"),
    ]
    text = as_markdown("Chat", messages)
    assert "*(asked to run bash: `touch made.txt` — allowed once on Pixel)*" in text
    assert text.index("asked to run") < text.index("`bash` {") < text.index("<summary>result")
    assert text.count("asked to run") == 1 and "allow_once" not in text
    stopped = as_markdown(
        "Chat", [AssistantMessage(content=(call,), provider="p", model="m"), approval("t1", "deny", closed="stopped")]
    )
    assert "— declined: the run was stopped)*" in stopped  # not "deny", nor "stopped" alone


def test_a_group_export_says_orkas_and_a_stop() -> None:
    group = [
        {"id": "1", "from": "user", "text": "review it"},
        {"id": "2", "from": "commander", "text": "Asking."},
        {"id": "3", "from": "commander", "to": ["critic"], "dispatch": "review"},
        {"id": "4", "from": "critic", "text": "Half a rev", "stopped": True},
        {"id": "5", "from": "commander", "text": "", "stopped": True},
        {"id": "6", "from": "user", "text": "again"},
    ]
    text = as_markdown("Group", group=group)
    assert "**Orkas:**" in text and "commander" not in text
    assert "> Orkas asked critic: review" in text
    assert text.count("*(stopped by you)*") == 1 and text.index("stopped by you") < text.index("again")

"""What a rewind cannot undo, said before it: calls that reached the network (web, connectors, a command the person
allowed the network), writes outside the workspace; a refused call did nothing out there and is not said."""

from __future__ import annotations

from pathlib import Path

from orkas.adapter.conversations.checkpoints import group_effects, outside_effects
from orkas.engine.messages import AssistantMessage, Notice, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage

NET = "network"


def call(id: str, name: str, **input: str) -> AssistantMessage:
    return AssistantMessage(content=(ToolUseBlock(id=id, name=name, input=input),), provider="p", model="m")


def result(id: str, error: bool = False) -> UserMessage:
    return UserMessage(content=(ToolResultBlock(tool_use_id=id, content=(TextBlock(text="x"),), is_error=error),))


def test_what_left_the_workspace_is_said_and_what_was_refused_is_not(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    messages = [
        call("1", "web_fetch", url="https://example.org"),
        result("1"),
        call("2", "web_fetch", url="https://refused.example"),
        result("2", error=True),
        call("3", "write_file", path=str(tmp_path / "elsewhere.txt")),
        result("3"),
        call("4", "write_file", path="inside.txt"),
        result("4"),
        Notice(
            kind="approval", text="curl …", detail={"tool": "bash", "decision": "allow_once", "categories": "network"}
        ),
        Notice(kind="approval", text="curl …", detail={"tool": "bash", "decision": "deny", "categories": "network"}),
        # the web call allowed, then refused (a private address): nothing left, and it is no command
        Notice(
            kind="approval",
            text="fetch",
            detail={"tool": "web_fetch", "tool_use_id": "2", "decision": "allow_once", "categories": "network"},
        ),
    ]
    said = outside_effects(messages, ws, ["/srv/shared"])
    assert said == [
        "network: web_fetch",
        "network: a command allowed the network",
        f"outside the workspace: {tmp_path / 'elsewhere.txt'}",
        "commands could also write in: /srv/shared",
    ]
    assert outside_effects([call("5", "read_file", path="a"), result("5")], ws, ["/srv/shared"]) == []


def test_a_group_s_trail_says_the_same() -> None:
    records = [
        {"id": "u1", "from": "user", "text": "go"},
        {
            "id": "b1",
            "from": "coder",
            "process": [
                {"tool": "mcp_call", "ok": True},
                {"tool": "bash", "ok": True, "approval": {"decision": "allow_run", "categories": "network write"}},
                {"tool": "bash", "ok": True, "approval": {"decision": "deny", "categories": "network"}},
            ],
        },
    ]
    assert group_effects(records, []) == ["network: mcp_call", "network: a command allowed the network"]

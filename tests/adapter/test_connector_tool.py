"""`add_connector`: nothing is written before the person accepts; a proposal that could never be added is
refused without a question; a question left unanswered expires as a no, and the product is told."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from orkas.adapter.connectors import tool as connector_tool
from orkas.adapter.connectors.config import Connectors
from orkas.adapter.settings.vault import Vault, choose_key_source
from orkas.engine.abort import AbortSignal
from orkas.engine.consent import Ask, Decision, Permissions
from orkas.engine.tools.base import ToolContext


def context(tmp_path: Path, permissions: Permissions, asked: list[Ask]) -> ToolContext:
    async def ask(question: Ask) -> bool:
        asked.append(question)
        decided = permissions.immediate(question)
        if decided is not None:
            return decided
        return await permissions.wait(permissions.question(question))

    return ToolContext(workspace=tmp_path, signal=AbortSignal(), tool_use_id="t1", ask=ask)


def store(tmp_path: Path) -> Connectors:
    data = tmp_path / "data"
    return Connectors(data / "connectors.json", Vault(data / "vault.bin", choose_key_source(data)))


async def answer_when_asked(permissions: Permissions, decision: Decision) -> None:
    while not permissions.open_questions:
        await asyncio.sleep(0.01)
    permissions.answer(permissions.open_questions[0], decision)


async def test_accepted_shows_the_exact_command_and_hides_values(tmp_path: Path) -> None:
    connectors = store(tmp_path)
    permissions = Permissions(workspace=tmp_path, can_ask=True)
    asked: list[Ask] = []
    tool = connector_tool.AddConnector(connectors)
    proposal = {"name": "files", "command": "npx -y server-files --root '/my docs'", "env": {"TOKEN": "t0p-s3cret"}}
    answering = asyncio.create_task(answer_when_asked(permissions, "allow_once"))
    result = await tool.execute(proposal, context(tmp_path, permissions, asked))
    await answering
    assert not result.is_error and "added files (local)" in result.content[0].text  # type: ignore[union-attr]
    shown = asked[0].preview
    assert "npx -y server-files --root '/my docs'" in shown and "RUN THIS COMMAND" in shown
    assert "env TOKEN" in shown and "t0p-s3cret" not in shown and asked[0].level == "dangerous"
    assert connectors.get("files").env == ["TOKEN"] and connectors.secrets(connectors.get("files"))[1] == {
        "TOKEN": "t0p-s3cret"
    }


async def test_declined_or_impossible_writes_nothing(tmp_path: Path) -> None:
    connectors = store(tmp_path)
    permissions = Permissions(workspace=tmp_path, can_ask=True)
    asked: list[Ask] = []
    tool = connector_tool.AddConnector(connectors)
    bad = await tool.execute({"name": "web", "url": "http://example.org/mcp"}, context(tmp_path, permissions, asked))
    assert bad.is_error and "plain http only to this machine" in bad.content[0].text and not asked  # type: ignore[union-attr]
    answering = asyncio.create_task(answer_when_asked(permissions, "deny"))
    declined = await tool.execute(
        {"name": "web", "url": "https://mcp.example.org"}, context(tmp_path, permissions, asked)
    )
    await answering
    assert declined.is_error and connectors.load() == {}
    nobody = Permissions(workspace=tmp_path, can_ask=False)  # no UI attached: a no, without waiting
    alone = await tool.execute({"name": "web", "url": "https://mcp.example.org"}, context(tmp_path, nobody, []))
    assert alone.is_error and connectors.load() == {}


async def test_an_unanswered_proposal_expires_as_a_no(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connector_tool, "EXPIRES_AFTER", 0.3)
    connectors = store(tmp_path)
    expired: list[str] = []
    permissions = Permissions(workspace=tmp_path, can_ask=True, on_expired=expired.append)
    tool = connector_tool.AddConnector(connectors)
    result = await tool.execute({"name": "web", "url": "https://mcp.example.org"}, context(tmp_path, permissions, []))
    assert result.is_error and "within 10 minutes" in result.content[0].text  # type: ignore[union-attr]
    assert len(expired) == 1 and connectors.load() == {} and not permissions.open_questions
    assert permissions.answer(expired[0], "allow_once") is False  # a late answer finds it closed

"""The knowledge service: background embedding, watched folders, past conversations, and the agent's
tools over them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orkas.adapter.knowledge.past_chats import transcript_text
from orkas.adapter.knowledge.service import KnowledgeService
from orkas.engine.abort import AbortSignal
from orkas.engine.memory.embedders import E5Embedder
from orkas.engine.memory.kb_tools import ChatSearch, KbList, KbRead, KbSearch
from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage
from orkas.engine.tools.base import ToolContext
from orkas.engine.tools.untrusted import wrap


@pytest.fixture
def service(tmp_path: Path) -> Iterator[KnowledgeService]:
    knowledge = KnowledgeService(tmp_path / "kb", E5Embedder)
    yield knowledge
    knowledge.close()


def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, signal=AbortSignal(), tool_use_id="t")


def until(condition: object, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_added_text_is_searchable_at_once_and_embedded_in_the_background(service: KnowledgeService) -> None:
    service.add_text("note/vpn", "To reach the VPN, use WireGuard with the config from IT.", "VPN")
    assert service.kb.search("WireGuard", mode="keyword")[0].doc_id == "note/vpn"  # before any embedding
    assert service.wait_idle()
    assert service.kb.search("how do I connect to the company network remotely?", mode="vector")[0].doc_id == "note/vpn"
    assert service.status()["pending"] == 0 and service.status()["embedder"] == "multilingual-e5-small"


def test_a_watched_folder_reindexes_when_a_file_changes(service: KnowledgeService, tmp_path: Path) -> None:
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "leave.md").write_text("Annual leave is 22 days.")
    report = service.add_path(folder, watch=True)
    assert report["added"] == 1 and service.watched() == [str(folder.resolve())]
    (folder / "leave.md").write_text("Annual leave is 25 days from 2027.")
    until(lambda: bool(service.kb.search("25 days", mode="keyword")))
    (folder / "leave.md").unlink()
    until(lambda: service.kb.documents() == [])


def test_an_unwatched_folder_is_no_longer_followed_but_keeps_what_was_indexed(
    service: KnowledgeService, tmp_path: Path
) -> None:
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "leave.md").write_text("Annual leave is 22 days.")
    service.add_path(folder, watch=True)
    assert service.unwatch(str(folder.resolve())) and service.watched() == []
    assert not service.unwatch(str(folder.resolve()))  # not watched any more
    (folder / "leave.md").write_text("Annual leave is 30 days.")
    (folder / "new.md").write_text("Parental leave is 20 weeks.")
    marker = tmp_path / "other"  # a folder still watched shows that events are being delivered
    marker.mkdir()
    service.add_path(marker, watch=True)
    (marker / "ping.md").write_text("ping pong")
    until(lambda: bool(service.kb.search("pong", mode="keyword")))  # after any re-index the earlier edits caused
    assert service.kb.search("22 days", mode="keyword") and not service.kb.search("Parental", mode="keyword")


async def test_tools_search_read_list_and_cite(service: KnowledgeService, tmp_path: Path) -> None:
    service.add_text("note/deploy", "Step 1: build.\nStep 2: run make release.\nStep 3: restart ledger.", "deploy")
    found = await KbSearch(service.kb).execute({"query": "make release"}, ctx(tmp_path))
    assert "deploy:1-3" in found.content[0].text  # type: ignore[union-attr]
    read = await KbRead(service.kb).execute({"doc_id": "note/deploy", "start_line": 2, "end_line": 2}, ctx(tmp_path))
    assert read.content[0].text == wrap("    2  Step 2: run make release.", "kb_read note/deploy")  # type: ignore[union-attr]
    missing = await KbRead(service.kb).execute({"doc_id": "nope"}, ctx(tmp_path))
    assert missing.is_error
    listed = await KbList(service.kb).execute({}, ctx(tmp_path))
    assert "note/deploy (1 passages)" in listed.content[0].text  # type: ignore[union-attr]


async def test_past_conversations_are_found_with_conversation_and_message(
    service: KnowledgeService, tmp_path: Path
) -> None:
    question = UserMessage(content=(TextBlock(text="Which database port does staging use?"),))
    answer = AssistantMessage(content=(TextBlock(text="Staging uses port 5433."),), provider="p", model="m")
    assert transcript_text([question, answer]) == (
        f"[{question.id}] user: Which database port does staging use?\n[{answer.id}] assistant: Staging uses port 5433."
    )
    service.index_conversation("c0ffee", "Staging setup", [question, answer])
    result = await ChatSearch(service.chats).execute({"query": "staging database port"}, ctx(tmp_path))
    text = result.content[0].text  # type: ignore[union-attr]
    assert "conversation “Staging setup” (c0ffee, message" in text and "5433" in text
    assert result.details["hits"][0]["messages"] == [question.id, answer.id]  # type: ignore[index]


def test_after_a_turn_only_the_new_messages_are_indexed(service: KnowledgeService) -> None:
    def said(role: str, words: str) -> UserMessage | AssistantMessage:
        if role == "user":
            return UserMessage(content=(TextBlock(text=words),))
        return AssistantMessage(content=(TextBlock(text=words),), provider="p", model="m")

    turn1 = [said("user", "Where is the zorium report?"), said("assistant", "In reports/zorium.md.")]
    turn2 = [said("user", "And the quokka numbers?"), said("assistant", "They are in quokka.csv.")]
    service.index_conversation("c1", "Reports", turn1)
    first = service.chats.document_ids("chat/c1/")
    before = service.chats.read(first[0])
    service.index_conversation("c1", "Reports", turn1 + turn2)
    docs = service.chats.document_ids("chat/c1/")
    assert docs[0] == first[0] and len(docs) == 2 and service.chats.read(docs[0]) == before  # untouched
    assert "quokka" in service.chats.read(docs[1]) and "zorium" not in service.chats.read(docs[1])
    service.index_conversation("c1", "Reports", turn1 + turn2)  # nothing new: nothing added
    assert service.chats.document_ids("chat/c1/") == docs
    summary = [said("user", "Summary: zorium report and quokka numbers were found.")]
    service.index_conversation("c1", "Reports", summary)  # compacted: the last id is gone, so from scratch
    [only] = service.chats.document_ids("chat/c1/")
    assert "Summary" in service.chats.read(only)
    service.forget_conversation("c1")
    assert service.chats.document_ids("chat/c1") == [] and service.chats.search("zorium", mode="keyword") == []

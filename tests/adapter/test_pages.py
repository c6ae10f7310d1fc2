"""A long transcript read a page at a time (pages.py), and the sidebar's search kept in memory (search.py):
through their public functions, over data in the on-disk format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orkas.adapter.conversations.changes import ChatChanges
from orkas.adapter.conversations.pages import read_page, starts_turn
from orkas.adapter.conversations.search import SearchIndex
from orkas.adapter.conversations.sessions import load
from orkas.adapter.conversations.store import ConversationStore
from tests.big_chat import write_big_chat, write_many_chats


def test_paging_from_the_end_gives_every_message_once_in_order_each_page_from_a_turn(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    path = store.transcript_path(write_big_chat(tmp_path, 3000))
    whole = [m.id for m in load(path, write_back=False)[0].messages()]
    page = read_page(path, limit=100)
    seen = [m.id for m in page.messages]
    while page.older:
        page = read_page(path, before=page.older, limit=100)
        assert starts_turn(page.messages[0])  # a tool's result never opens a page without its call
        seen[:0] = [m.id for m in page.messages]
    assert seen == whole


def test_a_torn_last_record_is_not_shown_and_an_unknown_cursor_gives_an_empty_page(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    path = store.transcript_path(write_big_chat(tmp_path, 300))
    last = read_page(path).messages[-1].id
    with path.open("ab") as f:
        f.write(b'{"v":1,"id":"torn","ro')
    assert read_page(path).messages[-1].id == last
    assert read_page(path, before="not-there").messages == []
    assert read_page(tmp_path / "none.jsonl").messages == []


@pytest.mark.parametrize("told", [True, False], ids=["told by inotify", "looking at every chat"])
def test_the_kept_search_sees_new_words_a_new_title_a_new_chat_and_forgets_a_deleted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, told: bool
) -> None:
    if not told:  # as on macOS and Windows, or when the kernel's watches ran out
        monkeypatch.setattr(ChatChanges, "open", classmethod(lambda cls, root: None))
    store = ConversationStore(tmp_path)
    chats = write_many_chats(tmp_path, 50)
    index = SearchIndex(store)
    index.warm()
    [hit] = index.search("needle-0003")
    assert hit.conversation.id == chats[3] and hit.message_id == "u999999" and "needle-0003" in hit.snippet
    transcript = store.transcript_path(chats[5])
    record = {"v": 1, "id": "late", "ts": 2e9, "role": "user", "content": [{"type": "text", "text": "A Zebra Later"}]}
    with transcript.open("a") as f:
        f.write(json.dumps(record) + "\n")
    assert [(h.conversation.id, h.message_id) for h in index.search("zebra later")] == [(chats[5], "late")]
    store.rename(chats[9], "Holiday plans")
    assert [h.conversation.id for h in index.search("holiday")] == [chats[9]]
    store.delete(chats[3])
    assert index.search("needle-0003") == []
    store.restore(chats[3])
    assert [h.conversation.id for h in index.search("needle-0003")] == [chats[3]]
    late = write_big_chat(tmp_path, 40, title="Made after the first search")
    assert [h.conversation.id for h in index.search("after the first")] == [late]
    assert index.search("Question 12: what about")[0].conversation.id == late  # the newest first
    with store.transcript_path(late).open("a") as f:  # a chat made since is followed too
        f.write(json.dumps({**record, "id": "later", "content": [{"type": "text", "text": "Said later on"}]}) + "\n")
    assert [(h.conversation.id, h.message_id) for h in index.search("said later")] == [(late, "later")]
    transcript.write_bytes(b"")  # rewritten (a rewind to the start)
    assert index.search("zebra later") == []

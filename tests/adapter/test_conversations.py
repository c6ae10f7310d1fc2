"""Conversations on disk: create, list, rename, recycle and restore, grants, search, continue after restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from orkas.adapter.conversations.search import search
from orkas.adapter.conversations.store import ConversationStore
from orkas.core.errors import ConfigError
from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage
from orkas.engine.sandbox import PathDenied


class Clock:
    now = 100.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> ConversationStore:
    return ConversationStore(tmp_path / "data", clock=Clock())


async def test_create_list_rename_and_default_workspace(store: ConversationStore, tmp_path: Path) -> None:
    first = store.create()
    own = tmp_path / "project"
    own.mkdir()
    second = store.create(title="Report", workspace=own)
    assert Path(first.workspace).is_dir() and Path(first.workspace).parent == tmp_path / "data" / "workspaces"
    assert second.workspace == str(own.resolve())
    assert [c.id for c in store.recent()] == [second.id, first.id]
    store.rename(first.id, "  Taxes 2026  ")
    assert store.get(first.id).title == "Taxes 2026" and store.recent()[0].id == first.id
    with pytest.raises(ConfigError, match="not a folder"):
        store.create(workspace=tmp_path / "missing")


async def test_recycle_and_restore(store: ConversationStore) -> None:
    conversation = store.create(title="Old")
    store.delete(conversation.id)
    assert store.recent() == [] and (store.recycle / conversation.id / "meta.json").exists()
    assert store.restore(conversation.id).title == "Old" and len(store.recent()) == 1
    with pytest.raises(ConfigError):
        store.delete("../etc")


async def test_grants_go_through_the_path_policy(store: ConversationStore, tmp_path: Path) -> None:
    conversation = store.create()
    shared = tmp_path / "shared"
    shared.mkdir()
    assert str(shared.resolve()) in store.grant(conversation.id, shared).granted
    with pytest.raises(PathDenied):
        store.grant(conversation.id, Path("/etc"))
    policy = store.policy(store.get(conversation.id))
    assert policy.check(shared / "x.txt", write=True) == shared.resolve() / "x.txt"


async def test_history_survives_a_restart_and_search_finds_titles_and_content(store: ConversationStore) -> None:
    conversation = store.create()
    session, report = store.session(conversation.id)
    assert report is None and session.messages() == []
    await session.append(UserMessage(content=(TextBlock(text="Compare the Lisbon and Porto offices"),)))
    await session.append(
        AssistantMessage(content=(TextBlock(text="Porto is cheaper by 12%."),), provider="p", model="m")
    )
    session.close()
    store.touch(store.get(conversation.id), "Compare the Lisbon and Porto offices")
    restarted = ConversationStore(store.root.parent)
    again, _ = restarted.session(conversation.id)
    assert [m.role for m in again.messages()] == ["user", "assistant"]
    assert restarted.get(conversation.id).title == "Compare the Lisbon and Porto offices"
    other = restarted.create(title="Porto trip")
    hits = search(restarted, "porto")
    assert {h.conversation.id for h in hits} == {conversation.id, other.id}
    content_hit = next(h for h in search(restarted, "cheaper by"))
    assert "cheaper by 12%" in content_hit.snippet
    assert search(restarted, "nothing like this") == [] and search(restarted, "  ") == []


def test_a_chat_s_folder_is_checked_before_the_chat_is_made(store: ConversationStore, tmp_path: Path) -> None:
    """ "In a folder…" made the chat, then its first run refused the folder: an empty chat was left behind."""
    from orkas.adapter.conversations.folders import work_folder

    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("x")
    assert work_folder(project) == project.resolve()
    refused = {
        "project": "not a full path",  # relative: it would be read from the server's own folder
        str(project / "notes.txt"): "not a folder",
        str(tmp_path / "missing"): "not a folder",
        "~": "the home folder",
        "/": "the home folder",  # it holds the home folder
        "/etc": "protected location",
        str(tmp_path / "data"): "protected location",  # the app's data, given as protected
    }
    (tmp_path / "data").mkdir(exist_ok=True)
    for chosen, why in refused.items():
        with pytest.raises(ConfigError, match=why):
            work_folder(Path(chosen), protected=[tmp_path / "data"])
        with pytest.raises(ConfigError, match=why):
            store.create(workspace=Path(chosen), protected=[tmp_path / "data"])
    assert store.recent() == []  # nothing made for a folder refused

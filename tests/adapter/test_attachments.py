"""Attachments: uploaded bytes and dropped paths, limits, protected places, what the model receives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orkas.adapter.conversations.attachments import (
    MAX_FILE_BYTES,
    AttachmentError,
    AttachmentStore,
    clean_name,
    content_for,
)
from orkas.adapter.conversations.store import ConversationStore
from orkas.engine.convert import to_llm_messages
from orkas.engine.messages import AttachmentBlock, TextBlock, UserMessage
from orkas.engine.providers.vendors import ANTHROPIC_CAPS
from orkas.engine.sandbox import PathPolicy


@pytest.fixture
def setup(tmp_path: Path) -> tuple[AttachmentStore, ConversationStore, Path]:
    data = tmp_path / "data"
    return AttachmentStore(data), ConversationStore(data), data


def test_uploaded_bytes_are_stored_under_the_conversation_with_a_safe_name(setup: tuple) -> None:
    attachments, conversations, data = setup
    chat = conversations.create()
    record = attachments.add_bytes(chat, "../../etc/passwd", b"not really")
    stored = Path(record.path)
    assert stored.read_bytes() == b"not really" and record.name == "passwd"
    assert stored.is_relative_to(data / "attachments" / chat.id)
    assert attachments.get(chat.id, [record.id]) == [record]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [("report.pdf", "report.pdf"), ("a/b\\c.txt", "c.txt"), ("", "file"), ("...", "file"), ("ab\x00c?.md", "abc.md")],
)
def test_names_are_cleaned(raw: str, clean: str) -> None:
    assert clean_name(raw) == clean


def test_too_large_and_unknown_ids_get_clear_errors(setup: tuple) -> None:
    attachments, conversations, _ = setup
    chat = conversations.create()
    with pytest.raises(AttachmentError, match=r"the limit is 50\.0 MB"):
        attachments.add_bytes(chat, "big.bin", b"\0" * (MAX_FILE_BYTES + 1))
    with pytest.raises(AttachmentError, match="no attachment"):
        attachments.get(chat.id, ["nope"])
    with pytest.raises(AttachmentError, match="at most 20"):
        attachments.get(chat.id, [str(i) for i in range(21)])


def test_a_dropped_file_inside_the_workspace_is_referenced_in_place(setup: tuple, tmp_path: Path) -> None:
    attachments, conversations, _ = setup
    workspace = tmp_path / "project"
    workspace.mkdir()
    inside = workspace / "spec.md"
    inside.write_text("# spec")
    chat = conversations.create(workspace=workspace)
    record = attachments.add_path(chat, inside, PathPolicy(workspace))
    assert record.in_place and record.path == str(inside.resolve())


def test_a_dropped_file_outside_is_copied(setup: tuple, tmp_path: Path) -> None:
    attachments, conversations, _ = setup
    outside = tmp_path / "Downloads" / "invoice.txt"
    outside.parent.mkdir()
    outside.write_text("total 12")
    chat = conversations.create()
    record = attachments.add_path(chat, outside, PathPolicy(chat.workspace))
    assert not record.in_place and Path(record.path).read_text() == "total 12"
    outside.write_text("changed later")  # the attachment is what was dropped
    assert Path(record.path).read_text() == "total 12"


def test_protected_places_folders_and_missing_files_are_refused(setup: tuple, tmp_path: Path) -> None:
    attachments, conversations, _ = setup
    chat = conversations.create()
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "key").write_text("s3cret")
    policy = PathPolicy(chat.workspace, protected=[secrets])
    with pytest.raises(AttachmentError, match="protected"):
        attachments.add_path(chat, secrets / "key", policy)
    link = tmp_path / "innocent.txt"
    os.symlink(secrets / "key", link)
    with pytest.raises(AttachmentError, match="protected"):  # a link to a protected file is the file
        attachments.add_path(chat, link, policy)
    with pytest.raises(AttachmentError, match="folder"):
        attachments.add_path(chat, tmp_path, policy)
    with pytest.raises(AttachmentError, match="does not exist"):
        attachments.add_path(chat, tmp_path / "gone.txt", policy)
    with pytest.raises(AttachmentError, match="full path"):
        attachments.add_path(chat, Path("relative.txt"), policy)


def test_the_model_gets_a_line_per_file_and_small_images_as_images(setup: tuple) -> None:
    attachments, conversations, _ = setup
    chat = conversations.create()
    image = attachments.add_bytes(chat, "shot.png", b"\x89PNG fake")
    big = attachments.add_bytes(chat, "huge.png", b"\0" * (5 * 1024 * 1024 + 1))
    doc = attachments.add_bytes(chat, "notes.txt", b"hi")
    blocks = content_for([image, big, doc])
    assert [b.type for b in blocks] == ["attachment", "image", "attachment", "attachment"]  # big: as a file
    first = blocks[0]
    assert isinstance(first, AttachmentBlock) and (first.name, first.size, first.path) == ("shot.png", 9, image.path)
    # what the model reads is made at the provider boundary
    sent = to_llm_messages([UserMessage(content=tuple(blocks))], ANTHROPIC_CAPS, provider="anthropic", model="m")
    line = sent[0].content[0]
    assert isinstance(line, TextBlock) and line.text.startswith("[attached file: shot.png (9 bytes, image/png) at ")


def test_an_attachment_keeps_its_exact_name_and_typed_text_stays_text(tmp_path: Path) -> None:
    """`report (1).pdf` stays that name live and after a reload; text that looks like an attachment
    line is what the person typed and is shown."""
    from orkas.adapter.conversations.turns import message_shown as _message_shown
    from orkas.engine.codec import decode, encode

    attachments, conversations = AttachmentStore(tmp_path), ConversationStore(tmp_path)
    chat = conversations.create()
    report = attachments.add_bytes(chat, "report (1).pdf", b"%PDF-1.4")
    typed = "[attached file: this is just what I typed (really)]"
    message = UserMessage(content=(TextBlock(text=typed), *content_for([report])))
    reloaded = decode(encode(message))
    for seen in (message, reloaded):
        shown = _message_shown(seen)  # type: ignore[arg-type]
        assert shown.text == typed and [a.name for a in shown.attachments] == ["report (1).pdf"]

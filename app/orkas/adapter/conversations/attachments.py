"""Files attached to a conversation's messages.

A browser uploads the bytes; the desktop window hands over the dropped file's real path. Either way the
file ends up in `<data>/attachments/<conversation>/<id>/<name>` — or, when the path already lies inside
the conversation's workspace or a granted folder, it is referenced where it is (no copy). The agent is
granted that attachments folder, so `read_file` works on every attachment. Images small enough for the
model also go to it as images.
"""

from __future__ import annotations

import base64
import contextlib
import json
import mimetypes
import os
import unicodedata
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import BinaryIO

from orkas.adapter.conversations.store import Conversation
from orkas.core.errors import ConfigError
from orkas.core.fsutil import atomic_write
from orkas.engine.convert import readable_size as _size
from orkas.engine.messages import AttachmentBlock, ImageBlock
from orkas.engine.sandbox import PathDenied, PathPolicy

MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # what the providers accept per image; larger images are attached as files
MAX_FILES_PER_MESSAGE = 20
IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}


class AttachmentError(ConfigError):
    """A file that cannot be attached; the message says why."""


@dataclass(frozen=True, slots=True)
class Attachment:
    id: str
    name: str
    size: int
    media_type: str
    path: str
    in_place: bool  # referenced where it lies (inside the workspace or a granted folder)

    @property
    def is_image(self) -> bool:
        return self.media_type in IMAGE_TYPES and self.size <= MAX_IMAGE_BYTES


def clean_name(name: str) -> str:
    """A safe single file name: no folders, no control characters, not empty, not too long."""
    name = unicodedata.normalize("NFC", name).replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if c.isprintable() and c not in '<>:"|?*').strip().strip(".")
    return name[:200] or "file"


def _media_type(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


class AttachmentStore:
    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / "attachments"

    def folder(self, conversation_id: str) -> Path:
        return self.root / conversation_id

    def add_bytes(self, conversation: Conversation, name: str, data: bytes) -> Attachment:
        if len(data) > MAX_FILE_BYTES:
            raise AttachmentError(f"{clean_name(name)} is {_size(len(data))}; the limit is {_size(MAX_FILE_BYTES)}")
        attachment_id = uuid.uuid4().hex[:16]
        target = self.folder(conversation.id) / attachment_id / clean_name(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, data)
        return self._record(
            conversation, Attachment(attachment_id, target.name, len(data), _media_type(name), str(target), False)
        )

    def incoming(self, conversation: Conversation, name: str) -> IncomingFile:
        """An upload written to disk as its bytes arrive (see IncomingFile)."""
        attachment_id = uuid.uuid4().hex[:16]
        target = self.folder(conversation.id) / attachment_id / clean_name(name)
        return IncomingFile(self, conversation, attachment_id, target, name)

    def add_path(self, conversation: Conversation, path: Path, policy: PathPolicy) -> Attachment:
        """A dropped file by its real path: referenced in place inside the allowed roots, else copied.

        The file is opened through a path policy of its own (`PathPolicy.source`): a protected place, or a
        link into one, is refused; the copy is read from the file that was checked."""
        if not path.is_absolute():
            raise AttachmentError(f"{str(path)!r} is not a full path")
        if path.is_dir():
            raise AttachmentError(f"{path.name} is a folder: grant it to the conversation instead of attaching it")
        if not path.exists():
            raise AttachmentError(f"{path} does not exist or is not a regular file")
        try:
            source = PathPolicy.source(path, protected=policy.protected, home=policy.home)
            resolved, handle = source.open_read(path)
        except PathDenied as e:
            raise AttachmentError(f"{path.name} cannot be attached: {e.reason}") from None
        attachment_id = uuid.uuid4().hex[:16]
        with handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise AttachmentError(f"{path.name} is {_size(size)}; the limit is {_size(MAX_FILE_BYTES)}")
            try:
                policy.check(resolved, write=False)
                in_place, stored = True, resolved
            except PathDenied:
                in_place = False
                stored = self.folder(conversation.id) / attachment_id / clean_name(path.name)
                stored.parent.mkdir(parents=True, exist_ok=True)
                _copy_capped(handle, stored)
        return self._record(
            conversation,
            Attachment(attachment_id, clean_name(path.name), size, _media_type(path.name), str(stored), in_place),
        )

    def get(self, conversation_id: str, ids: list[str]) -> list[Attachment]:
        if len(ids) > MAX_FILES_PER_MESSAGE:
            raise AttachmentError(f"at most {MAX_FILES_PER_MESSAGE} files per message")
        index = self._index(conversation_id)
        missing = [i for i in ids if i not in index]
        if missing:
            raise AttachmentError(f"no attachment {missing[0]!r} in this conversation")
        return [index[i] for i in ids]

    def image(self, conversation_id: str, attachment_id: str) -> Attachment | None:
        """The attachment if it is an image the chat may show inline (its own record, a known image
        type, still on disk); None otherwise."""
        found = self._index(conversation_id).get(attachment_id)
        if found is None or found.media_type not in IMAGE_TYPES or not Path(found.path).is_file():
            return None
        return found

    def ids_by_path(self, conversation_id: str) -> dict[str, str]:
        """Which attachment each stored path is (the transcript keeps paths, the UI asks by id)."""
        return {a.path: a.id for a in self._index(conversation_id).values()}

    def _index(self, conversation_id: str) -> dict[str, Attachment]:
        path = self.folder(conversation_id) / "index.json"
        if not path.exists():
            return {}
        return {a["id"]: Attachment(**a) for a in json.loads(path.read_text())}

    def _record(self, conversation: Conversation, attachment: Attachment) -> Attachment:
        index = self._index(conversation.id)
        index[attachment.id] = attachment
        folder = self.folder(conversation.id)
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / "index.json", json.dumps([asdict(a) for a in index.values()]).encode())
        return attachment


class IncomingFile:
    """An upload on its way to disk: `write` each chunk as it arrives (past MAX_FILE_BYTES it raises and
    nothing is kept), then `finish` — or `abort`. A 200 MB upload never sits in memory."""

    def __init__(self, store: AttachmentStore, conversation: Conversation, ident: str, target: Path, name: str) -> None:
        self.store, self.conversation, self.ident, self.target, self.name = store, conversation, ident, target, name
        self.size = 0
        target.parent.mkdir(parents=True, exist_ok=True)
        self.partial = target.with_name(target.name + ".part")
        self._out: BinaryIO | None = self.partial.open("wb")
        os.chmod(self.partial, 0o600)

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > MAX_FILE_BYTES:
            self.abort()
            raise AttachmentError(f"{self.target.name} is larger than the limit of {_size(MAX_FILE_BYTES)}")
        assert self._out is not None
        self._out.write(chunk)

    def finish(self) -> Attachment:
        assert self._out is not None
        self._out.flush()
        os.fsync(self._out.fileno())
        self._out.close()
        self._out = None
        os.replace(self.partial, self.target)
        attachment = Attachment(
            self.ident, self.target.name, self.size, _media_type(self.name), str(self.target), False
        )
        return self.store._record(self.conversation, attachment)

    def abort(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None
        self.partial.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self.target.parent.rmdir()


def _copy_capped(source: BinaryIO, target: Path) -> None:
    """Copy at most MAX_FILE_BYTES (the file may grow while it is copied): past the limit, nothing is kept."""
    copied = 0
    with target.open("wb") as out:
        while chunk := source.read(1024 * 1024):
            copied += len(chunk)
            if copied > MAX_FILE_BYTES:
                out.close()
                target.unlink(missing_ok=True)
                raise AttachmentError(f"{target.name} grew past the limit of {_size(MAX_FILE_BYTES)} while copying")
            out.write(chunk)
    os.chmod(target, 0o600)


def content_for(attachments: list[Attachment]) -> list[AttachmentBlock | ImageBlock]:
    """The attachments on the person's message: each as a structured block (a line of text only at
    the provider boundary), and small images as images too."""
    blocks: list[AttachmentBlock | ImageBlock] = []
    for a in attachments:
        blocks.append(AttachmentBlock(name=a.name, size=a.size, media_type=a.media_type, path=a.path))
        if a.is_image:
            data = base64.b64encode(Path(a.path).read_bytes()).decode()
            blocks.append(ImageBlock(data=data, media_type=a.media_type))
    return blocks

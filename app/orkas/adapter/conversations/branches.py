"""Branches: the versions of a conversation after an edit or a new answer.

Editing a message forks the conversation where that message stands (versions of the prompt); asking for
another answer forks it just after the message (versions of the answer): what came from there on is put aside
as a branch, and the transcript continues from the fork. Every
branch stays reachable: switching puts the transcript's own tail aside as a branch in turn and brings
the chosen one back, so the versions of a message read "2 of 3" and nothing is ever dropped.

Kept in `<conversation>/branches/`: `index.json` maps each fork point (the id of the message the
versions follow; "" for the start) to its versions in order, `LIVE` standing where the transcript's
own tail is; each stored version is a transcript of its own, `<branch id>.jsonl`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from orkas.adapter.conversations.transcript import encode_line, parse
from orkas.core.errors import ConfigError
from orkas.core.fsutil import atomic_write
from orkas.engine.messages import Message

LIVE = "live"


@dataclass(frozen=True, slots=True)
class Versions:
    """What the UI shows on the first message after a fork point: "‹ index+1 of count ›"."""

    after: str  # the fork point: the id of the message before ("" = the start of the conversation)
    message_id: str  # the transcript's message right after it (the one carrying the arrows)
    index: int
    count: int


class Branches:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def fork(self, messages: Sequence[Message], at: int) -> list[Message]:
        """Put `messages[at:]` aside as a branch; returns what the transcript keeps (`messages[:at]`)."""
        self._put_aside(messages[at - 1].id if at else "", messages[at:])
        return list(messages[:at])

    def fork_answer(self, messages: Sequence[Message], at: int) -> list[Message]:
        """Another answer to the person's `messages[at]`: its answer and what followed are put aside as a version
        *of the answer* (the fork point is that message, so its arrows go on the answer, never on the prompt an
        edit forks), and the transcript keeps what came before it: the run sends the same message again, under
        its id. Nothing after it (a retry of a try that left nothing) puts nothing aside."""
        if tail := messages[at + 1 :]:
            self._put_aside(messages[at].id, tail)
        return list(messages[:at])

    def _put_aside(self, after: str, tail: Sequence[Message]) -> None:
        """`tail` becomes a stored version of fork point `after`, where the live one stood; the live one after it."""
        index = self._index()
        versions = index.setdefault(after, [LIVE])
        versions[versions.index(LIVE)] = self._store(tail)
        versions.append(LIVE)
        self._save(index)

    def put_aside_last(self, after: str) -> int:
        """The index of the version fork point `after` put aside last (just before the live one it added)."""
        return len(self._index().get(after, [LIVE, LIVE])) - 2

    def switch(self, messages: Sequence[Message], after: str, to: int) -> list[Message]:
        """The transcript with version `to` of fork point `after` in place of its own tail (which is put
        aside as a branch where it stood)."""
        index = self._index()
        versions = index.get(after)
        if versions is None or not 0 <= to < len(versions):
            raise ConfigError("no such version of this message")
        at = _position(messages, after)
        if versions[to] == LIVE:
            return list(messages)
        chosen = self._load(versions[to])
        versions[versions.index(LIVE)] = self._store(messages[at:])
        (self.folder / f"{versions[to]}.jsonl").unlink()
        versions[to] = LIVE
        self._save(index)
        return [*messages[:at], *chosen]

    def shown(self, messages: Sequence[Message]) -> list[Versions]:
        """The fork points this transcript passes through, where it has more than one version."""
        index = self._index()
        if not index:
            return []
        found = []
        ids = {m.id: i for i, m in enumerate(messages)}
        for after, versions in index.items():
            at = 0 if after == "" else ids.get(after, -2) + 1
            if 0 <= at < len(messages) and len(versions) > 1:
                found.append(Versions(after, messages[at].id, versions.index(LIVE), len(versions)))
        return found

    def _store(self, tail: Sequence[Message]) -> str:
        branch = uuid.uuid4().hex
        self.folder.mkdir(exist_ok=True)
        atomic_write(self.folder / f"{branch}.jsonl", b"".join(encode_line(m) for m in tail))
        return branch

    def _load(self, branch: str) -> list[Message]:
        messages, _, _ = parse((self.folder / f"{branch}.jsonl").read_bytes())
        return messages

    def _index(self) -> dict[str, list[str]]:
        try:
            data = json.loads((self.folder / "index.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise ConfigError(f"this conversation's versions cannot be read ({e})") from None
        return {k: v for k, v in data.items() if isinstance(v, list) and LIVE in v}

    def _save(self, index: dict[str, list[str]]) -> None:
        self.folder.mkdir(exist_ok=True)
        atomic_write(self.folder / "index.json", json.dumps(index).encode())


def _position(messages: Sequence[Message], after: str) -> int:
    if after == "":
        return 0
    for i, message in enumerate(messages):
        if message.id == after:
            return i + 1
    raise ConfigError("that version's place is not in the conversation any more")

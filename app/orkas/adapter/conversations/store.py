"""Conversations: the product's unit of work.

Each lives in `<data>/conversations/<id>/`: `meta.json` (title, times, workspace, granted folders) and
`messages.jsonl` (the crash-safe transcript, see sessions.py). Deleting moves the folder to
`<data>/recycle/`, from where it can be restored. A conversation without a chosen workspace gets its
own folder under `<data>/workspaces/`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from orkas.adapter.conversations.branches import Branches
from orkas.adapter.conversations.folders import work_folder
from orkas.adapter.conversations.sessions import SESSION_ID, PersistentSession, load
from orkas.adapter.conversations.transcript import LoadReport
from orkas.core.errors import ConfigError, ConversationBusy, NotFound
from orkas.core.fsutil import HeldLock, atomic_write, try_lock
from orkas.engine.sandbox import PathPolicy

TITLE_CHARS = 80
TUNABLE = frozenset({"model", "instructions", "temperature", "reasoning", "agent"})
APP_TITLES = frozenset({"first_words", "model"})  # a title's sources the app may replace (see `title_source`)


@dataclass(slots=True)
class Conversation:
    id: str
    title: str
    created: float
    updated: float
    workspace: str
    granted: list[str] = field(default_factory=list)
    pinned: bool = False  # kept at the top of the list
    # Chosen for this conversation (the composer's switcher and its settings); empty = the app's default.
    model: str = ""
    instructions: str = ""  # added to the system prompt of every turn
    temperature: float | None = None
    reasoning: str = "off"  # off, low, medium, high: used where the model supports it
    # A named agent (AGENT.md) this conversation is bound to: it answers directly, and learns from its runs
    # (when learning is on). Empty: the person talks with Orkas itself, which never evolves.
    agent: str = ""
    # Where the title came from: "user" (typed), "first_words" (the first message, at once) or "model"
    # (a short call after the first answer). Only a first-words title is ever replaced.
    title_source: str = ""

    @property
    def workspace_path(self) -> Path:
        return Path(self.workspace)


class ConversationStore:
    def __init__(self, data_dir: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.root = data_dir / "conversations"
        self.recycle = data_dir / "recycle"
        self.workspaces = data_dir / "workspaces"
        self.clock = clock

    def _now(self) -> float:
        return self.clock()

    def _folder(self, conversation_id: str) -> Path:
        if not SESSION_ID.match(conversation_id):
            raise ConfigError(f"invalid conversation id {conversation_id!r}")
        return self.root / conversation_id

    def create(self, *, title: str = "", workspace: Path | None = None, protected: Sequence[Path] = ()) -> Conversation:
        """`workspace`: a folder the person chose, checked by `work_folder` first (`protected`: the app's places)."""
        conversation_id = uuid.uuid4().hex
        folder = self._folder(conversation_id)
        if workspace is None:
            workspace = self.workspaces / conversation_id
            workspace.mkdir(parents=True, exist_ok=True)
        else:
            workspace = work_folder(workspace, protected)
        folder.mkdir(parents=True)
        now = self._now()
        conversation = Conversation(conversation_id, title.strip()[:TITLE_CHARS], now, now, str(workspace.resolve()))
        conversation.title_source = "user" if conversation.title else ""
        self._save(conversation)
        return conversation

    def adopt(
        self, conversation_id: str, workspace: Path, *, legacy: Path | None = None, agent: str = ""
    ) -> Conversation:
        """Make a conversation of a folder an older `orkas run` left without metadata (a group's bus and state),
        or of an older command-line session's transcript (`legacy`, moved in). Its title is its first words."""
        folder = self._folder(conversation_id)
        if not workspace.is_dir():
            raise ConfigError(f"workspace {str(workspace)!r} is not a folder")
        folder.mkdir(parents=True, exist_ok=True)
        if legacy is not None and not (folder / "messages.jsonl").exists():
            shutil.move(str(legacy), str(folder / "messages.jsonl"))
        now = self._now()
        conversation = Conversation(conversation_id, "", now, now, str(workspace.resolve()), agent=agent)
        self._save(conversation)
        return conversation

    def place(self, conversation_id: str, workspace: Path) -> Conversation:
        """Run the conversation in another folder from now on (a command run from elsewhere)."""
        conversation = self.get(conversation_id)
        if not workspace.is_dir():
            raise ConfigError(f"workspace {str(workspace)!r} is not a folder")
        if Path(conversation.workspace) != workspace.resolve():
            conversation.workspace = str(workspace.resolve())
            self._save(conversation)
        return conversation

    def get(self, conversation_id: str) -> Conversation:
        meta = self._folder(conversation_id) / "meta.json"
        if not meta.exists():
            raise NotFound(f"no conversation {conversation_id!r}")
        return Conversation(**json.loads(meta.read_text()))

    def branches(self, conversation_id: str) -> Branches:
        """The versions put aside by edits and new answers (branches.py)."""
        return Branches(self._folder(conversation_id) / "branches")

    def events_path(self, conversation_id: str) -> Path:
        """Where the conversation's product events are kept for replay (event_log.py)."""
        return self._folder(conversation_id) / "events.jsonl"

    # ---- one run at a time per conversation, across processes ----
    def hold_run(self, conversation_id: str) -> HeldLock:
        """The right to run this conversation, across processes: the window and `orkas run --session` in a
        terminal each take it for a run, so two runs never number one event log twice or interleave one
        transcript. Raises ConversationBusy while another process holds it."""
        held = self._take(conversation_id)
        if held is None:
            raise self.busy(conversation_id)
        with contextlib.suppress(OSError):  # who holds it, for the refusal the other side gets
            (self._run_lock(conversation_id).with_name("run.holder")).write_text(_this_process())
        return held

    def busy(self, conversation_id: str, what: str = "send again when that run ends, or stop it") -> ConversationBusy:
        """The refusal for a run another process holds, naming it and where to act ("… : {what} there")."""
        return ConversationBusy(f"this conversation is running in {self.holder(conversation_id)}: {what} there")

    def holder(self, conversation_id: str) -> str:
        """Who holds the conversation's run lock, in words ("a terminal (orkas run, process 12)")."""
        try:
            return self._run_lock(conversation_id).with_name("run.holder").read_text().strip() or ANOTHER
        except OSError:
            return ANOTHER

    def running_elsewhere(self, conversation_id: str) -> bool:
        """Whether another process holds the conversation's run lock (asked of one this process does not hold)."""
        if not self._run_lock(conversation_id).parent.is_dir():
            return False  # no such conversation (a lock is never made for one)
        return self._take(conversation_id, look=True) is None

    def _take(self, conversation_id: str, *, look: bool = False) -> HeldLock | None:
        """The run lock if it is free (`look`: given back at once). A look takes it for a moment: in this
        process looks and takes go one at a time (a look on a worker thread made a send here fail as "running
        in the Orkas window"); another process's look is waited out by a few quick tries."""
        for attempt in range(LOCK_TRIES):
            with _TAKING:
                held = try_lock(self._run_lock(conversation_id))
                if held is not None and look:
                    held.release()
            if held is not None or attempt == LOCK_TRIES - 1:
                return held
            time.sleep(0.002 * (attempt + 1))
        return None

    def _run_lock(self, conversation_id: str) -> Path:
        return self._folder(conversation_id) / "run.lock"

    # ---- messages that could not be sent (no provider yet): kept until resent or discarded ----
    def unsent(self, conversation_id: str) -> list[dict[str, Any]]:
        path = self._folder(conversation_id) / "unsent.json"
        try:
            records = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError):
            return []  # unreadable: nothing to offer, never fatal
        return [r for r in records if isinstance(r, dict) and isinstance(r.get("message_id"), str)]

    def keep_unsent(self, conversation_id: str, record: dict[str, Any]) -> None:
        records = [r for r in self.unsent(conversation_id) if r["message_id"] != record["message_id"]]
        self._write_unsent(conversation_id, [*records, record])

    def take_unsent(self, conversation_id: str, message_id: str) -> dict[str, Any]:
        """Remove and return the unsent message; NotFound when there is none with that id."""
        records = self.unsent(conversation_id)
        found = next((r for r in records if r["message_id"] == message_id), None)
        if found is None:
            raise NotFound(f"no unsent message {message_id!r}")
        self._write_unsent(conversation_id, [r for r in records if r is not found])
        return found

    def _write_unsent(self, conversation_id: str, records: list[dict[str, Any]]) -> None:
        atomic_write(self._folder(conversation_id) / "unsent.json", json.dumps(records, ensure_ascii=False).encode())

    def recent(self) -> list[Conversation]:
        """Every conversation not in the recycle bin, most recently active first."""
        return _listed(self.root)

    def deleted(self) -> list[Conversation]:
        """The recycle bin, most recently active first."""
        return _listed(self.recycle)

    def pin(self, conversation_id: str, pinned: bool) -> Conversation:
        conversation = self.get(conversation_id)
        conversation.pinned = pinned
        self._save(conversation)
        return conversation

    def tune(self, conversation_id: str, changes: dict[str, Any]) -> Conversation:
        """Change the conversation's model, instructions, temperature, reasoning or agent (already validated)."""
        conversation = self.get(conversation_id)
        for name in TUNABLE & changes.keys():
            setattr(conversation, name, changes[name])
        self._save(conversation)
        return conversation

    def rename(self, conversation_id: str, title: str) -> Conversation:
        conversation = self.get(conversation_id)
        conversation.title = title.strip()[:TITLE_CHARS]
        conversation.title_source = "user"
        conversation.updated = self._now()
        self._save(conversation)
        return conversation

    def retitle(self, conversation_id: str, title: str) -> Conversation | None:
        """The model's title, in place of the first words — never over a title the person typed."""
        conversation = self.get(conversation_id)
        title = " ".join(title.split())[:TITLE_CHARS]
        if conversation.title_source != "first_words" or not title:
            return None
        conversation.title, conversation.title_source = title, "model"
        self._save(conversation)
        return conversation

    def follow_first_prompt(self, conversation_id: str, first_prompt: str) -> Conversation | None:
        """The chat's first message became another (edited, or another version of it shown): a title the app
        made from the old one (its first words, or the model's) becomes the new one's first words, else the
        sidebar names the chat, and its search finds it, by words it no longer says. Never a title the person
        typed. None when the title stays."""
        conversation = self.get(conversation_id)
        title = " ".join(first_prompt.split())[:TITLE_CHARS]
        if conversation.title_source not in APP_TITLES or not title or title == conversation.title:
            return None
        conversation.title, conversation.title_source = title, "first_words"
        self._save(conversation)
        return conversation

    def touch(self, conversation: Conversation, first_prompt: str = "") -> None:
        """After a turn: newer in the list, and titled by its first prompt if it had no title."""
        conversation.updated = self._now()
        if not conversation.title and first_prompt.strip():
            conversation.title = " ".join(first_prompt.split())[:TITLE_CHARS]
            conversation.title_source = "first_words"
        # At every message, on the event loop: not synced (two fsyncs were ~10% of the server's loop time in the
        # soak); a crash may bring back the previous sort time, or the untitled state (retitled by the next message).
        self._save(conversation, sync=False)

    def grant(self, conversation_id: str, folder: Path, *, protected: tuple[Path, ...] = ()) -> Conversation:
        """Give the agent a folder beyond the workspace. Raises `PathDenied` for places never grantable."""
        conversation = self.get(conversation_id)
        granted = self.policy(conversation, protected=protected).grant(folder)
        if str(granted) not in conversation.granted:
            conversation.granted.append(str(granted))
            self._save(conversation)
        return conversation

    def revoke(self, conversation_id: str, folder: str) -> Conversation:
        conversation = self.get(conversation_id)
        if folder not in conversation.granted:
            raise ConfigError(f"{folder!r} is not granted to this conversation")
        conversation.granted.remove(folder)
        self._save(conversation)
        return conversation

    def policy(
        self, conversation: Conversation, *, protected: tuple[Path, ...] = (), own: tuple[Path, ...] = ()
    ) -> PathPolicy:
        """The conversation's path policy. Its default workspace (inside the data folder) is its own; so are
        the `own` folders the caller names (its attachments)."""
        return PathPolicy(
            conversation.workspace,
            granted=conversation.granted,
            protected=protected,
            own=(*self.own(conversation), *own),
        )

    def own(self, conversation: Conversation) -> tuple[Path, ...]:
        """The conversation's folders inside the data folder: its default workspace, if it uses it."""
        default = self.workspaces / conversation.id
        return (default,) if Path(conversation.workspace) == default else ()

    def delete(self, conversation_id: str) -> None:
        """Move to the recycle bin (restorable)."""
        folder = self._folder(conversation_id)
        if not folder.exists():
            raise NotFound(f"no conversation {conversation_id!r}")
        self.recycle.mkdir(parents=True, exist_ok=True)
        shutil.move(str(folder), str(self.recycle / conversation_id))

    def discard(self, conversation_id: str) -> None:
        """Remove, not to the recycle bin, a conversation just made that nothing was said in (a command that
        stopped on a configuration mistake before sending): it left an empty "Untitled chat" behind."""
        shutil.rmtree(self._folder(conversation_id), ignore_errors=True)
        made = self.workspaces / conversation_id
        if made.is_dir() and not any(made.iterdir()):
            made.rmdir()

    def restore(self, conversation_id: str) -> Conversation:
        source = self.recycle / conversation_id
        if not SESSION_ID.match(conversation_id) or not source.exists():
            raise NotFound(f"no conversation {conversation_id!r} in the recycle bin")
        self.root.mkdir(parents=True, exist_ok=True)
        shutil.move(str(source), str(self._folder(conversation_id)))
        return self.get(conversation_id)

    def session(self, conversation_id: str, *, write_back: bool = True) -> tuple[PersistentSession, LoadReport | None]:
        """The conversation's transcript, loaded and repaired (or a new one). `write_back=False` repairs
        in memory only: a transcript a live run is writing must never be rewritten under it (its
        pending tool call would be "repaired" as interrupted and what the run writes next lost). A run
        holding the conversation's lock — in another process (`orkas run` while the window opens the chat),
        or this one — makes it so whatever the caller asked: only the run writes its transcript."""
        path = self.transcript_path(conversation_id)
        if not path.exists():
            self.get(conversation_id)  # raises for an unknown id
            return PersistentSession(path, name=conversation_id), None
        if write_back and self.running_elsewhere(conversation_id):
            write_back = False
        session, report = load(path, write_back=write_back)
        session.name = conversation_id
        return session, report

    def transcript_path(self, conversation_id: str) -> Path:
        """The agent's transcript: `messages.jsonl`, or the commander's once the conversation is a group
        (then `messages.jsonl` is the group's bus: team/bus.py, team/migrate.py)."""
        folder = self._folder(conversation_id)
        commander = folder / "actors" / "commander.jsonl"
        return commander if commander.exists() else folder / "messages.jsonl"

    def _save(self, conversation: Conversation, *, sync: bool = True) -> None:
        data = json.dumps(asdict(conversation)).encode()
        atomic_write(self._folder(conversation.id) / "meta.json", data, sync=sync)


def _listed(root: Path) -> list[Conversation]:
    found = [c for c in map(listed_one, root.glob("*/meta.json")) if c is not None] if root.exists() else []
    return sorted(found, key=lambda c: (c.pinned, c.updated), reverse=True)  # pinned ones first


def listed_one(meta: Path) -> Conversation | None:
    """A conversation's metadata as the list reads it: None for a damaged or missing one (skipped, never fatal)."""
    try:
        return Conversation(**json.loads(meta.read_text()))
    except (OSError, ValueError, TypeError):
        return None


ANOTHER = "another Orkas (the window or a terminal's orkas run)"
LOCK_TRIES = 4  # ~12 ms at most before a held run lock is taken for a run going on
_TAKING = threading.Lock()


def _this_process() -> str:
    """How the other side names this process in its refusal."""
    if sys.argv[1:2] == ["run"]:
        return f"a terminal (orkas run, process {os.getpid()})"
    return f"the Orkas window (process {os.getpid()})"

"""Each conversation's checkpoints of its folder, by the person's message they were taken before.

Before a turn that may change the workspace (any mode but plan), the runtime asks for a checkpoint
(engine/checkpoints): what the file tools and the commands of that turn and every later one changed can then be
undone from that message. Kept in `<conversation>/checkpoints.jsonl`, a line per checkpoint and per rewind (whose
`before` undoes it). The store itself is `<data>/checkpoints`, private, shared by every conversation: the same
content is kept once.

What a rewind cannot undo is said before it: calls that reached the network (web, connectors, a command allowed
the network) and changes to folders other than the workspace (granted ones), found in what the conversation did
after that message.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from orkas.core.errors import ConfigError, NotFound
from orkas.core.fsutil import append_durably
from orkas.engine.checkpoints.restore import Plan, plan, recover, rewind
from orkas.engine.checkpoints.store import CheckpointStore
from orkas.engine.messages import Message, Notice, ToolResultBlock, ToolUseBlock

log = logging.getLogger(__name__)
RECORDS = "checkpoints.jsonl"
NETWORK_TOOLS = frozenset({"web_fetch", "web_search", "mcp_call", "package_install"})
CHANGING_TOOLS = frozenset({"write_file", "edit_file", "delete_file"})
COMMAND = "a command allowed the network"


@dataclass(frozen=True, slots=True)
class Kept:
    message_id: str
    checkpoint: str
    workspace: str
    at: float
    files: int
    new_bytes: int
    left_out: int
    truncated: bool
    seconds: float


class Checkpoints:
    def __init__(self, data: Path, conversations: Path) -> None:
        # The data folder is never checkpointed nor rewound, even by a chat whose folder holds it (the home folder).
        self.store = CheckpointStore(data / "checkpoints", skip=(data,))
        self.conversations = conversations

    def before_turn(self, conversation_id: str, workspace: Path, message_id: str) -> Kept:
        """A checkpoint of the workspace now, kept under the person's message about to run."""
        root = workspace.resolve()
        self._recover(root)
        taken = self.store.take(root)
        kept = Kept(
            message_id,
            taken.id,
            str(root),
            time.time(),
            taken.files,
            taken.new_bytes,
            len(taken.left_out),
            taken.truncated,
            round(taken.seconds, 4),
        )
        self._append(conversation_id, {"kind": "checkpoint", **asdict(kept)})
        return kept

    def listed(self, conversation_id: str) -> list[Kept]:
        """Its checkpoints, oldest first (a rewind a crash interrupted in one of its folders is finished first)."""
        records = self._records(conversation_id)
        for workspace in {str(r["workspace"]) for r in records if r.get("workspace")}:
            if Path(workspace).is_dir():
                self._recover(Path(workspace))
        return [Kept(**{k: v for k, v in r.items() if k != "kind"}) for r in records if r.get("kind") == "checkpoint"]

    def find(self, conversation_id: str, message_id: str) -> Kept:
        """The checkpoint taken before that message ran (its first, if it ran more than once)."""
        found = next((k for k in self.listed(conversation_id) if k.message_id == message_id), None)
        if found is None:
            raise NotFound("no checkpoint was taken before that message (it ran in plan mode, or before checkpoints)")
        return found

    def preview(self, conversation_id: str, message_id: str) -> tuple[Kept, Plan]:
        kept = self.find(conversation_id, message_id)
        root = self._root(kept)
        self._recover(root)
        return kept, plan(self.store, root, kept.checkpoint)[0]

    def rewind(self, conversation_id: str, message_id: str) -> tuple[Kept, Plan]:
        kept = self.find(conversation_id, message_id)
        self._recover(self._root(kept))
        done = rewind(self.store, self._root(kept), kept.checkpoint, {"conversation": conversation_id})
        self._rewound(conversation_id, kept.checkpoint, done.now, kept.workspace, message_id=message_id)
        return kept, done

    def undo(self, conversation_id: str, before: str | None = None, *, apply: bool = True) -> Plan:
        """A rewind's files taken back (the one whose "just before" checkpoint is `before`, else the last): the
        workspace as it was just before it. The undo is a rewind of its own: undoing it brings back what was there
        (the edits made after the rewind too). `apply=False`: what it would do, changing nothing."""
        rewinds = [r for r in self._records(conversation_id) if r.get("kind") == "rewind"]
        last = next((r for r in reversed(rewinds) if before is None or r.get("before") == before), None)
        if last is None:
            raise NotFound("this conversation has no such rewind to undo")
        root = Path(str(last["workspace"]))
        self._recover(root)
        if not apply:
            return plan(self.store, root, str(last["before"]))[0]
        done = rewind(self.store, root, str(last["before"]), {"conversation": conversation_id})
        self._rewound(conversation_id, str(last["before"]), done.now, str(root), undoing=str(last["before"]))
        return done

    def _rewound(self, conversation_id: str, to: str, before: str, workspace: str, **more: str) -> None:
        record = {"kind": "rewind", "to": to, "before": before, "at": time.time(), "workspace": workspace, **more}
        self._append(conversation_id, record)

    def _recover(self, root: Path) -> None:
        """A rewind a crash interrupted in this folder, finished; a rollback is kept as an undoable rewind of the
        conversation that began it (work done in the folder since the crash comes back with `--undo`)."""
        found = recover(self.store, root)
        if found is None:
            return
        conversation = found.note.get("conversation", "")
        log.warning("conversation %s: an interrupted rewind was finished (%s)", conversation or "?", found.said)
        if found.undo is not None and conversation and (self.conversations / conversation).is_dir():
            self._rewound(conversation, "", found.undo, str(root), recovered="rolled back after a crash")

    def _root(self, kept: Kept) -> Path:
        root = Path(kept.workspace)
        if not root.is_dir():
            raise ConfigError(f"{root} is not a folder any more: its checkpoints cannot be restored there")
        return root

    def _records(self, conversation_id: str) -> list[dict[str, Any]]:
        path = self.conversations / conversation_id / RECORDS
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a line torn by a crash: the others stand
        return out

    def _append(self, conversation_id: str, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        append_durably(self.conversations / conversation_id / RECORDS, line.encode())


def outside_effects(messages: Sequence[Message], workspace: Path, granted: Sequence[str]) -> list[str]:
    """What the conversation did after a point that a rewind of the workspace cannot take back, in words."""
    network: Counter[str] = Counter()
    outside: list[str] = []
    results = [b for m in messages for b in getattr(m, "content", ()) if isinstance(b, ToolResultBlock)]
    failed = {b.tool_use_id for b in results if b.is_error}  # a call refused or failed did nothing out there
    for message in messages:
        if isinstance(message, Notice):  # a command the person allowed the network (other tools are said by name)
            detail = message.detail
            if detail.get("tool") == "bash" and _network_allowed(detail) and detail.get("tool_use_id") not in failed:
                network[COMMAND] += 1
            continue
        for block in getattr(message, "content", ()):
            if not isinstance(block, ToolUseBlock) or block.id in failed:
                continue
            if block.name in NETWORK_TOOLS:
                network[block.name] += 1
            elif block.name in CHANGING_TOOLS:
                path = Path(str(block.input.get("path", "")))
                if path.is_absolute() and not path.resolve().is_relative_to(workspace):
                    outside.append(str(path))
    return _said(network, outside, granted)


def group_effects(records: Sequence[dict[str, Any]], granted: Sequence[str]) -> list[str]:
    """The same, from a group's log: each bubble's tool trail (its calls, the questions they asked as answered)."""
    network: Counter[str] = Counter()
    for record in records:
        for step in record.get("process") or ():
            tool = str(step.get("tool", ""))
            if not step.get("ok", True):
                continue
            if tool in NETWORK_TOOLS:
                network[tool] += 1
            elif tool == "bash" and _network_allowed(step.get("approval") or {}):
                network[COMMAND] += 1
    return _said(network, [], granted)


def _network_allowed(approval: Mapping[str, Any]) -> bool:
    """An answered question that allowed the network."""
    allowed = approval.get("decision") in ("allow_once", "allow_run", "always")
    return allowed and "network" in str(approval.get("categories", "")).split()


def _said(network: Counter[str], outside: Sequence[str], granted: Sequence[str]) -> list[str]:
    said = [f"network: {name}" + (f" ×{n}" if n > 1 else "") for name, n in network.items()]
    said += [f"outside the workspace: {path}" for path in dict.fromkeys(outside)]
    if granted and said:
        said.append(f"commands could also write in: {', '.join(granted)}")
    return said

"""What compaction must never paraphrase: kept by code, byte-exact, outside the model's summary.

- the run's task statement, as the user wrote it;
- everything else the user wrote (corrections, constraints, steering), newest kept when over a cap;
- a ledger of the files tools read, wrote, edited or deleted;
- the open items of the latest checklist the assistant wrote.

The state travels inside the compacted history as an app-only `Notice` (never sent to a model),
so the next compaction merges rather than forgets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from orkas.engine.messages import AssistantMessage, Message, Notice, TextBlock, ToolResultBlock, UserMessage
from orkas.engine.tokens import estimate_tokens

STATE_KIND = "compaction_state"
SUMMARY_HEADER = "[Orkas context summary"
ORKAS_NOTE = "[Orkas]"
MAX_NOTES_TOKENS = 6000
MAX_NOTE_TOKENS = 800  # corrections and constraints are short; a pasted document is summarized instead
FILE_ACTIONS = {
    "read_file": "read",
    "write_file": "wrote",
    "edit_file": "edited",
    "append_file": "wrote",
    "delete_file": "deleted",
}
_TODO = re.compile(r"^\s*[-*] \[( |x|X)\] (.+)$", re.MULTILINE)


@dataclass(slots=True)
class PinnedState:
    task: str = ""
    user_notes: list[str] = field(default_factory=list)
    files: dict[str, list[str]] = field(default_factory=dict)  # path -> actions, in order first seen
    todos: list[str] = field(default_factory=list)
    summary: str = ""
    compactions: int = 0
    outside: list[str] = field(default_factory=list)  # sources of outside text the summary absorbed

    def to_notice(self) -> Notice:
        data = {
            "task": self.task,
            "user_notes": self.user_notes,
            "files": self.files,
            "todos": self.todos,
            "summary": self.summary,
            "compactions": self.compactions,
            "outside": self.outside,
        }
        return Notice(kind=STATE_KIND, text=json.dumps(data, ensure_ascii=False))

    @classmethod
    def from_history(cls, history: Sequence[Message]) -> PinnedState:
        """The state a previous compaction left, or an empty one."""
        for message in history:
            if isinstance(message, Notice) and message.kind == STATE_KIND:
                try:
                    data = json.loads(message.text)
                    return cls(
                        task=str(data.get("task", "")),
                        user_notes=[str(n) for n in data.get("user_notes", [])],
                        files={str(k): [str(a) for a in v] for k, v in data.get("files", {}).items()},
                        todos=[str(t) for t in data.get("todos", [])],
                        summary=str(data.get("summary", "")),
                        compactions=int(data.get("compactions", 0)),
                        outside=[str(o) for o in data.get("outside", [])],
                    )
                except (ValueError, TypeError, AttributeError):
                    break  # a damaged state is rebuilt from what the history still holds
        return cls()

    def absorb(self, head: Sequence[Message], task: str, *, budget: int = MAX_NOTES_TOKENS) -> None:
        """Add what `head` (about to be summarized) holds that must survive verbatim. `budget` caps
        the pinned text so that pinning can never defeat compaction."""
        if task and not self.task:
            self.task = excerpt(task, max(MAX_NOTE_TOKENS, budget // 2))
        calls: dict[str, str] = {}
        for message in head:
            if isinstance(message, AssistantMessage):
                for call in message.tool_uses:
                    calls[call.id] = call.name
                    path = call.input.get("path")
                    if isinstance(path, str):
                        action = FILE_ACTIONS.get(call.name, call.name)
                        actions = self.files.setdefault(path, [])
                        if action not in actions:
                            actions.append(action)
                found = _open_todos(message.text)
                if found is not None:
                    self.todos = found
            elif isinstance(message, UserMessage):
                for block in message.content:
                    if isinstance(block, TextBlock) and _is_user_words(block.text, task):
                        self.user_notes.append(excerpt(block.text, MAX_NOTE_TOKENS))
        self._cap_notes(min(MAX_NOTES_TOKENS, budget))

    def _cap_notes(self, budget: int) -> None:
        kept: list[str] = []
        used = 0
        for note in reversed(self.user_notes):
            used += estimate_tokens(note)
            if used > budget and kept:
                break
            kept.append(note)
        self.user_notes = list(reversed(kept))

    def render(self) -> str:
        lines = [f"{SUMMARY_HEADER}: the earlier conversation was compacted {self.compactions} time(s).]"]
        if self.task:
            lines += ["", "## The task, as the user wrote it", self.task]
        if self.user_notes:
            lines += ["", "## Everything else the user wrote earlier (verbatim, oldest first)"]
            lines += [f"- {note}" for note in self.user_notes]
        if self.files:
            lines += ["", "## Files touched so far"]
            lines += [f"- {path}: {', '.join(actions)}" for path, actions in self.files.items()]
        if self.todos:
            lines += ["", "## Open todo items"]
            lines += [f"- [ ] {todo}" for todo in self.todos]
        if self.summary:
            lines += ["", "## Summary of the earlier work", self.summary]
        return "\n".join(lines)


def excerpt(text: str, max_tokens: int) -> str:
    """`text` verbatim when short enough, else its beginning with a marker (the rest is summarized)."""
    tokens = estimate_tokens(text)
    if tokens <= max_tokens:
        return text
    keep = int(len(text) * max_tokens / tokens)
    return f"{text[:keep]} […{len(text) - keep} more characters, covered by the summary]"


def _is_user_words(text: str, task: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and stripped != task.strip() and not stripped.startswith((ORKAS_NOTE, SUMMARY_HEADER))


def _open_todos(text: str) -> list[str] | None:
    items = _TODO.findall(text)
    if not items:
        return None
    return [item for mark, item in items if mark == " "]


def is_tool_result_message(message: Message) -> bool:
    return isinstance(message, UserMessage) and any(isinstance(b, ToolResultBlock) for b in message.content)

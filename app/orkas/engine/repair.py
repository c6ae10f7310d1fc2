"""Orphan repair: make any history satisfy the pairing invariant again. Pure and idempotent.

A process killed between a tool call and its result leaves "a call without a result" on disk;
sending that history as it is makes the provider reject every later request. After `repair`:

- every tool call is followed by one user message whose leading blocks are its results, in
  declared order (results split over several messages are merged; a missing one is synthesized as
  an "interrupted" error);
- results whose call does not exist, and second results for one call, are dropped;
- notices that sat between a call and its results move after the results;
- a message id seen twice keeps its first copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from orkas.engine.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    Notice,
    TextBlock,
    ToolResultBlock,
    UserMessage,
)

INTERRUPTED = "[interrupted: the previous run stopped before this tool call produced a result]"


@dataclass(slots=True)
class RepairReport:
    synthesized: list[str] = field(default_factory=list)  # call ids given an "interrupted" result
    dropped_orphans: list[str] = field(default_factory=list)  # results whose call does not exist
    dropped_duplicates: list[str] = field(default_factory=list)  # second results for one call
    merged_messages: int = 0  # result messages folded into the first one after their call
    reordered: int = 0  # result messages whose blocks were put in declared order
    moved_notices: int = 0
    dropped_messages: list[str] = field(default_factory=list)  # ids: duplicates, or emptied by repair

    @property
    def changed(self) -> bool:
        return bool(
            self.synthesized
            or self.dropped_orphans
            or self.dropped_duplicates
            or self.merged_messages
            or self.reordered
            or self.moved_notices
            or self.dropped_messages
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "changed": self.changed,
            "synthesized_results": self.synthesized,
            "dropped_orphan_results": self.dropped_orphans,
            "dropped_duplicate_results": self.dropped_duplicates,
            "merged_messages": self.merged_messages,
            "reordered_messages": self.reordered,
            "moved_notices": self.moved_notices,
            "dropped_messages": self.dropped_messages,
        }


def repair(history: Sequence[Message]) -> tuple[list[Message], RepairReport]:
    report = RepairReport()
    messages = _unique(history, report)
    out: list[Message] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        if isinstance(message, AssistantMessage) and message.tool_uses:
            out.append(message)
            end = i + 1
            while end < len(messages) and not isinstance(messages[end], AssistantMessage):
                end += 1
            out.extend(_answer(message, messages[i + 1 : end], report))
            i = end
        else:
            if isinstance(message, UserMessage):
                cleaned = _without_results(message, report)
                if cleaned is not None:
                    out.append(cleaned)
            else:
                out.append(message)
            i += 1
    return out, report


def _unique(history: Sequence[Message], report: RepairReport) -> list[Message]:
    seen: set[str] = set()
    out: list[Message] = []
    for message in history:
        if message.id in seen:
            report.dropped_messages.append(message.id)
            continue
        seen.add(message.id)
        out.append(message)
    return out


def _answer(call: AssistantMessage, group: Sequence[Message], report: RepairReport) -> list[Message]:
    """The messages after `call` (up to the next assistant message), repaired."""
    ids = [b.id for b in call.tool_uses]
    first_user = next((k for k, m in enumerate(group) if isinstance(m, UserMessage)), None)
    if first_user is not None and _already_paired(ids, group, first_user):
        return list(group)

    found: dict[str, ToolResultBlock] = {}
    extras: list[ContentBlock] = []
    rest: list[Message] = []
    notices: list[Message] = []
    holders = 0
    for k, message in enumerate(group):
        if isinstance(message, Notice):
            (notices if first_user is not None and k < first_user else rest).append(message)
            continue
        assert isinstance(message, UserMessage)
        results = [b for b in message.content if isinstance(b, ToolResultBlock)]
        if not results and k != first_user:
            rest.append(message)
            continue
        holders += 1
        for block in results:
            if block.tool_use_id not in ids:
                report.dropped_orphans.append(block.tool_use_id)
            elif block.tool_use_id in found:
                report.dropped_duplicates.append(block.tool_use_id)
            else:
                found[block.tool_use_id] = block
        extras.extend(b for b in message.content if not isinstance(b, ToolResultBlock))

    answered: list[ContentBlock] = []
    missing = [tool_id for tool_id in ids if tool_id not in found]
    for tool_id in ids:
        if tool_id not in found:
            report.synthesized.append(tool_id)
            found[tool_id] = ToolResultBlock(tool_use_id=tool_id, content=(TextBlock(text=INTERRUPTED),), is_error=True)
        answered.append(found[tool_id])
    if holders > 1:
        report.merged_messages += holders - 1
    elif holders == 1 and not missing:
        report.reordered += 1
    report.moved_notices += len(notices)
    base = group[first_user] if first_user is not None else None
    merged = (
        replace(base, content=(*answered, *extras))
        if isinstance(base, UserMessage)
        else UserMessage(content=tuple(answered), created_at=call.created_at)
    )
    return [merged, *notices, *rest]


def _already_paired(ids: list[str], group: Sequence[Message], first_user: int) -> bool:
    if first_user != 0:
        return False  # a notice (or nothing) sits between the call and its results
    head = group[0]
    assert isinstance(head, UserMessage)
    leading = [b.tool_use_id for b in head.content[: len(ids)] if isinstance(b, ToolResultBlock)]
    if leading != ids:
        return False
    if any(isinstance(b, ToolResultBlock) for b in head.content[len(ids) :]):
        return False
    return not any(
        isinstance(m, UserMessage) and any(isinstance(b, ToolResultBlock) for b in m.content) for m in group[1:]
    )


def _without_results(message: UserMessage, report: RepairReport) -> UserMessage | None:
    """A user message not after a tool call may not hold results: drop them (and the message if empty)."""
    orphans = [b for b in message.content if isinstance(b, ToolResultBlock)]
    if not orphans:
        return message
    report.dropped_orphans.extend(b.tool_use_id for b in orphans)
    kept = tuple(b for b in message.content if not isinstance(b, ToolResultBlock))
    if not kept:
        report.dropped_messages.append(message.id)
        return None
    return replace(message, content=kept)

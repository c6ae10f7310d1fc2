"""What a reflection reads: an agent's recent conversations as one compact transcript.

At most 5 conversations (the most recently active first in the selection, each shown oldest line first) and
16,000 estimated tokens. The person's words are kept whole (they carry the corrections); the agent's replies
are cut to 800 characters; tool calls become one line each (the tool, and the error's first line when it
failed, marked as outside text: an error says what the tool's world said); what the signals saw that the
transcript does not say — provider retries, denied approvals ("skip"), a stop by the person, a long silence
before the next message — is inlined where it happened. When the budget runs out, older conversations go
first, then the oldest lines of the oldest one kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from orkas.engine.evolution.signals import RunSignals
from orkas.engine.messages import AssistantMessage, Message, Notice, TextBlock, ToolResultBlock, UserMessage
from orkas.engine.tokens import estimate_tokens
from orkas.engine.tools.untrusted import carried, wrap

MAX_CONVERSATIONS = 5
MAX_TOKENS = 16_000
REPLY_CHARS = 800
SILENCE = 6 * 3600  # seconds without a reply from the person that a reflection should know of


@dataclass(slots=True)
class Conversation:
    id: str
    title: str
    messages: Sequence[Message]
    signals: Sequence[RunSignals] = field(default_factory=tuple)

    @property
    def last_at(self) -> float:
        times = [m.created_at for m in self.messages] + [s.at for s in self.signals]
        return max(times, default=0.0)


def _lines(conversation: Conversation) -> list[tuple[float, str]]:
    lines: list[tuple[float, str]] = []
    last_person = None
    results: dict[str, ToolResultBlock] = {}
    for message in conversation.messages:
        if isinstance(message, UserMessage):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    results[block.tool_use_id] = block
    for message in conversation.messages:
        at = message.created_at
        if isinstance(message, UserMessage):
            words = "".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()
            if not words:
                continue
            if last_person is not None and at - last_person > SILENCE:
                lines.append(
                    (at - 0.001, f"[silence: {int((at - last_person) // 3600)} h before the person wrote again]")
                )
            last_person = at
            lines.append((at, f"PERSON: {words}"))
        elif isinstance(message, AssistantMessage):
            for use in message.tool_uses:
                result = results.get(use.id)
                if result is not None and result.is_error:  # the error's words are the tool's world, not ours
                    error = "".join(getattr(b, "text", "") for b in result.content).strip().splitlines()
                    said = wrap((error[0] if error else "")[:160], f"the error of {use.name}")
                    lines.append((at, f"[tool {use.name} failed: {said}]"))
                else:
                    lines.append((at, f"[tool {use.name}]"))
            reply = message.text.strip()
            if reply:
                cut = reply if len(reply) <= REPLY_CHARS else reply[:REPLY_CHARS] + " […]"
                lines.append((at, f"AGENT: {cut}"))
        elif isinstance(message, Notice) and message.kind in ("stopped", "error"):
            lines.append((message.created_at, f"[{message.kind}: {message.text[:160]}]"))
    for run in conversation.signals:
        if run.retries:
            lines.append((run.at, f"[retry: the provider was tried again {run.retries}× (transient, not the agent)]"))
        if run.skips:
            lines.append((run.at, f"[skip: the person denied {run.skips} request(s)]"))
        if run.outcome == "stopped":
            lines.append((run.at, "[the person stopped the agent]"))
        if run.edits:
            lines.append((run.at, "[the person edited the agent's answer]"))
    return sorted(lines, key=lambda item: item[0])


def outside(conversations: Sequence[Conversation]) -> list[str]:
    """The outside text a reflection on these conversations reads: what their histories carried (every tool
    result but Orkas's own words, tools/untrusted.py), tool errors included. Empty only when the agent worked from
    the person's words alone."""
    return list(dict.fromkeys(source for c in conversations for source in carried(c.messages)))


def build(conversations: Sequence[Conversation], *, max_tokens: int = MAX_TOKENS) -> str:
    """The transcript for a reflection, within `max_tokens` (estimated)."""
    chosen = sorted(conversations, key=lambda c: c.last_at, reverse=True)[:MAX_CONVERSATIONS]
    sections: list[list[str]] = []
    used = 0
    for conversation in chosen:  # the most recent first: they get the budget
        header = f"### Conversation “{conversation.title or conversation.id}”"
        lines = [text for _at, text in _lines(conversation)]
        cost = estimate_tokens(header) + sum(estimate_tokens(line) + 1 for line in lines)
        if used + cost <= max_tokens:
            sections.append([header, *lines])
            used += cost
            continue
        room = max_tokens - used - estimate_tokens(header)
        kept: list[str] = []
        for line in reversed(lines):  # the end of a conversation says how it went: keep it, drop its start
            size = estimate_tokens(line) + 1
            if size > room:
                break
            kept.insert(0, line)
            room -= size
        if kept:
            sections.append([header, "[… earlier lines left out …]", *kept])
        break
    return "\n\n".join("\n".join(section) for section in reversed(sections))

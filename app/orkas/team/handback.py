"""The hand-back marker: how an agent holding the floor gives it back to the commander.

An agent ends its reply with exactly one of

    <handback reason="completed_handoff" />
    <handback reason="capability_boundary" />

(self-closing, or paired with `</handback>`). The marker is removed from the bubble and the floor returns.
Everything else fails closed — hands nothing back: a bare `<handback>`, an unknown reason, two markers
(even agreeing ones), a marker that is not the end of the reply, or one inside code (a fenced block or
an inline span, where it is an example, not an act: left as text). Markers outside code are stripped
whether or not they count, so no half-marker reaches the person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from orkas.engine.events import Done, Error, Event, TextDelta

Reason = Literal["completed_handoff", "capability_boundary"]

_CODE = re.compile(r"(?ms)^(```|~~~).*?(?:^\1[ \t]*$|\Z)|`[^`\n]+`")
_MARKER = re.compile(r"<handback\b[^>]*>(?:\s*</handback\s*>)?|</handback\s*>", re.IGNORECASE)
_VALID = re.compile(r'^<handback\s+reason="(completed_handoff|capability_boundary)"\s*(?:/>|>\s*</handback\s*>)$')


@dataclass(frozen=True, slots=True)
class Handback:
    text: str  # the reply as the person sees it
    reason: Reason | None  # None: the floor stays where it is


def parse_handback(reply: str) -> Handback:
    code = [m.span() for m in _CODE.finditer(reply)]

    def in_code(start: int) -> bool:
        return any(a <= start < b for a, b in code)

    markers = [m for m in _MARKER.finditer(reply) if not in_code(m.start())]
    if not markers:
        return Handback(reply, None)
    kept, last = [], 0
    for marker in markers:
        kept.append(reply[last : marker.start()])
        last = marker.end()
    kept.append(reply[last:])
    text = "".join(kept).rstrip()
    only = markers[0] if len(markers) == 1 else None
    valid = _VALID.match(only.group(0)) if only is not None else None
    at_end = only is not None and not reply[only.end() :].strip()
    reason: Reason | None = None
    if valid is not None and at_end:
        reason = "completed_handoff" if valid.group(1) == "completed_handoff" else "capability_boundary"
    return Handback(text, reason)


class StreamScrub:
    """Takes hand-back markers out of a member's events as they stream, so no view (the window, the phone,
    `orkas run --json`) ever shows that control markup. A marker may come split across deltas: text from a
    "<" that may still become one is held back until it either is one (dropped) or cannot be (sent on).

    Unlike `parse_handback`, a marker inside code is dropped too: a stream cannot know yet whether a fence
    closes. The bubble the bus keeps (from `parse_handback`) is what a reload shows."""

    def __init__(self) -> None:
        self.held = ""

    def text(self, delta: str) -> str:
        joined = _MARKER.sub("", self.held + delta)
        cut = _maybe_marker(joined)
        self.held = joined[cut:]
        return joined[:cut]

    def flush(self) -> str:
        """What was held, at the end of the text (a "<hand" never completed is text after all)."""
        held, self.held = self.held, ""
        return held

    def events(self, event: Event) -> list[Event]:
        """The events to send on for one the member's agent yielded."""
        if isinstance(event, TextDelta):
            kept = self.text(event.text)
            return [replace(event, text=kept)] if kept else []
        held = self.flush()
        before: list[Event] = [TextDelta(text=held)] if held else []
        if isinstance(event, Done):
            return [*before, replace(event, text=parse_handback(event.text).text)]
        if isinstance(event, Error) and event.partial_text:
            return [*before, replace(event, partial_text=parse_handback(event.partial_text).text)]
        return [*before, event]


_OPENINGS = ("<handback", "</handback")


def _maybe_marker(text: str) -> int:
    """Where a marker may be starting, unfinished, at the end of `text` (its length if nowhere)."""
    at = text.rfind("<")
    if at < 0 or ">" in text[at:]:
        return len(text)
    tail = text[at:].lower()
    if any(o.startswith(tail) or tail.startswith(o) for o in _OPENINGS):
        return at
    return len(text)

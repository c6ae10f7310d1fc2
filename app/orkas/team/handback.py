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
from dataclasses import dataclass
from typing import Literal

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

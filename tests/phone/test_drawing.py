"""What the phone's controls say: Orkas's own bubbles are Orkas's, never "commander" or "Assistant"."""

from __future__ import annotations

from typing import Any

import flet as ft

from orkas.phone.drawing import Drawing
from orkas.phone.strings import STRINGS, Words
from orkas.phone.transcript import Bubble, File, Item, Marker, Question, Transcript


class Idle:
    async def answer(self, question: Question, decision: str) -> None: ...
    async def undo(self, marker: Marker) -> None: ...
    async def retry(self, item: Bubble | Marker) -> None: ...
    def thumbnail(self, file: File, item: Item) -> bytes | None:
        return None


def said(control: Any) -> list[str]:
    """Every text a control shows, depth first."""
    texts = [control.value] if isinstance(control, ft.Text) and isinstance(control.value, str) else []
    for child in [*(getattr(control, "controls", None) or []), getattr(control, "content", None)]:
        if isinstance(child, ft.Control):
            texts += said(child)
    return texts


def test_orkas_speaks_as_orkas_and_talking_to_is_said_only_when_an_agent_holds_the_floor() -> None:
    chat = Transcript.from_history({"id": "g1", "after": 0, "messages": [], "group": []})
    chat.apply({"seq": 1, "type": "group_start", "members": ["tutor"], "floor": "commander"})
    chat.apply({"seq": 2, "type": "text_delta", "actor": "commander", "text": "Let me ask."})
    chat.apply({"seq": 3, "type": "text_delta", "actor": "tutor", "text": "Hello."})
    for lang in STRINGS:
        drawing = Drawing(Words(lang), Idle())
        names = [said(drawing.control(bubble))[0] for bubble in chat.items]
        assert names == ["Orkas", "tutor"], lang
        solo = said(drawing.control(Bubble(key="a", who="assistant", text="Hi.")))
        assert solo[0] == "Orkas" and not {"commander", "Assistant", "助手", "Assistente"} & set(solo), lang
    assert chat.talking_to == ""  # the commander holds the floor: no "Talking to" line
    chat.apply({"seq": 4, "type": "state_changed", "floor": "tutor"})
    assert chat.talking_to == "tutor"
    chat.apply({"seq": 5, "type": "turn_end", "ok": True, "aborted": False, "floor": "commander"})
    assert chat.talking_to == ""

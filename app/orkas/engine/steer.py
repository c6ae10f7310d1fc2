"""Messages a person sends while a run is busy: queued, then joined to the run at the next safe point.

The run drains the queue at each tool-loop boundary (the message joins the current turn) and when
the model gives its final answer (a new turn starts in the same run). Whatever is still queued when
the run ends is the caller's next turn: nothing is dropped.
"""

from __future__ import annotations

from orkas.engine.messages import UserMessage, user_text


class SteerQueue:
    def __init__(self) -> None:
        self._items: list[UserMessage] = []

    def put(self, message: str | UserMessage) -> UserMessage:
        item = user_text(message) if isinstance(message, str) else message
        if all(existing.id != item.id for existing in self._items):
            self._items.append(item)
        return item

    def drain(self) -> list[UserMessage]:
        items, self._items = self._items, []
        return items

    def __len__(self) -> int:
        return len(self._items)

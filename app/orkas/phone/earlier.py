"""A long chat's earlier messages on the phone, a page at a time: a chat opens on its newest page (drawing all
20,000 messages of a long one sent each as a control across the session's socket), and the button above the
first message drawn — or scrolling up to it — draws the page before, the reader's place kept."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import flet as ft

from orkas.phone.transcript import Transcript

if TYPE_CHECKING:
    from orkas.phone.view import PhoneView

PAGE = 60  # messages drawn on opening a chat, and per page further up: a few phone screens
NEAR_TOP = 200  # pixels from the top of the list where the page before is loaded
NEAR_END = 8  # pixels from the end of the list counted as at its end


class EarlierPages:
    """The pages before the ones drawn of one chat (`cursor`: the first drawn message's id, "" at the start)."""

    def __init__(self, view: PhoneView, chat: Transcript, cursor: str) -> None:
        self.view = view
        self.chat = chat
        self.cursor = cursor
        self.loading = False
        self.settled = False  # the list has been at its end (the open's jump there is over)
        self.pages = 0
        self.button = ft.TextButton(view.t("earlier"), icon=ft.Icons.EXPAND_LESS, on_click=self._clicked)

    def controls(self) -> list[ft.Control]:
        """What goes above the first message drawn: the button, while there are earlier pages."""
        return [self.button] if self.cursor else []

    async def scrolled(self, event: ft.OnScrollEvent) -> bool:
        """Scrolled up near the top: the page before is loaded (True when it was). Only once the list has been at
        its end: its own jump there as it opens starts at the top too."""
        if event.pixels >= event.max_scroll_extent - NEAR_END:
            self.settled = True
        if not self.settled or event.pixels > event.min_scroll_extent + NEAR_TOP:
            return False
        return await self.load()

    async def _clicked(self, _: Any) -> None:
        await self.load()

    async def load(self) -> bool:
        view = self.view
        if not self.cursor or self.loading:
            return False
        self.loading = True
        try:
            page = await view.client.messages(self.chat.conversation, before=self.cursor, limit=PAGE)
        finally:
            self.loading = False
        if view.chat is not self.chat:
            return False  # another chat opened meanwhile
        earlier = Transcript.from_history({"id": self.chat.conversation, "messages": page.get("messages", [])})
        drawn = []
        for item in earlier.items:
            control = view.drawing.control(item)
            view.drawn.setdefault(item.key, control)
            drawn.append(control)
        listing = view.listing
        first = next((c for c in listing.controls if c is not self.button), None)
        if self.button in listing.controls:
            listing.controls.remove(self.button)
        self.cursor = str(page.get("older") or "")
        listing.controls[0:0] = [*self.controls(), *drawn]
        listing.auto_scroll = False  # the reader is up here: what comes in below does not pull them down
        self.pages += 1
        place = f"earlier-{self.pages}"
        if first is not None:
            first.key = ft.ScrollKey(place)  # type: ignore[call-arg]
        view.page.update()
        if first is not None:  # where the reader was: at the message that was first before
            await listing.scroll_to(scroll_key=place, duration=0)
        return True

"""A long chat's earlier messages on the phone, a page at a time: a chat opens on its newest page (drawing all
20,000 messages of a long one sent each as a control across the session's socket), and the button above the
first message drawn — or scrolling up to it — draws the page before, the reader's place kept.

The place is kept by scrolling down by the new page's height once the phone has laid it out (the page is one
column, which reports its size). A page put above the first message leaves the list's offset where it was —
at the top, showing the new page's first message, with nowhere further up for the wheel or a finger to go, so
nothing more loaded (issue 38). `scroll_to(scroll_key=…)` moved nothing there, and an offset sent with the page
would be applied before the page is laid out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import flet as ft

from orkas.phone.transcript import Transcript

if TYPE_CHECKING:
    from orkas.phone.view import PhoneView

PAGE = 60  # messages drawn on opening a chat, and per page further up: a few phone screens
NEAR_TOP = 200  # pixels from the top of the list where the page before is loaded
SPACING = 8  # between the list's controls (the view's ListView)


class EarlierPages:
    """The pages before the ones drawn of one chat (`cursor`: the first drawn message's id, "" at the start)."""

    def __init__(self, view: PhoneView, chat: Transcript, cursor: str) -> None:
        self.view = view
        self.chat = chat
        self.cursor = cursor
        self.loading = False
        self.pages: list[ft.Column] = []  # drawn, the oldest first
        self.button = ft.TextButton(view.t("earlier"), icon=ft.Icons.EXPAND_LESS, on_click=self._clicked)

    def controls(self) -> list[ft.Control]:
        """What goes above the first message drawn: the button, while there are earlier pages."""
        return [self.button] if self.cursor else []

    async def scrolled(self, event: ft.OnScrollEvent) -> bool:
        """Scrolled up near the top: the page before is loaded (True when it was). Only the person's way up: the
        list's own jump to its end as it opens starts at the top too, going down."""
        upward = event.event_type == ft.ScrollType.UPDATE and (event.scroll_delta or 0) < 0
        if not upward or event.pixels > event.min_scroll_extent + NEAR_TOP:
            return False
        return await self.load()

    def replace(self, old: ft.Control, new: ft.Control) -> bool:
        """A message of an earlier page drawn again (an answer given on its card): False when none holds it."""
        for page in self.pages:
            if old in page.controls:
                page.controls[page.controls.index(old)] = new
                return True
        return False

    async def _clicked(self, _: Any) -> None:
        await self.load()

    async def load(self) -> bool:
        view = self.view
        if not self.cursor or self.loading:
            return False
        self.loading = True
        try:
            page = await view.client.messages(self.chat.conversation, before=self.cursor, limit=PAGE)
            if view.chat is not self.chat:
                return False  # another chat opened meanwhile
            self._draw(Transcript.from_history({"id": self.chat.conversation, "messages": page.get("messages", [])}))
            self.cursor = str(page.get("older") or "")
        finally:
            self.loading = False
        listing = view.listing
        if self.button in listing.controls:
            listing.controls.remove(self.button)
        listing.controls[0:0] = [*self.controls(), self.pages[0]]
        listing.auto_scroll = False  # the reader is up here: what comes in below does not pull them down
        view.page.update()
        return True

    def _draw(self, earlier: Transcript) -> None:
        drawn = []
        for item in earlier.items:
            control = self.view.drawing.control(item)
            self.view.drawn.setdefault(item.key, control)
            drawn.append(control)
        column = ft.Column(drawn, spacing=SPACING, tight=True)
        column.on_size_change = self._keeper(column)
        self.pages.insert(0, column)

    def _keeper(self, column: ft.Column) -> Any:
        """Down by the page's height when it is first laid out: the message the reader saw stays where it was."""

        async def laid_out(event: ft.LayoutSizeChangeEvent[Any]) -> None:
            column.on_size_change = None
            column.update()
            if column in self.view.listing.controls:  # still this chat
                await self.view.listing.scroll_to(delta=event.height + SPACING, duration=0)

        return laid_out

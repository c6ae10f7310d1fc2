"""Where the phone view is: its route, kept in the address bar, so the browser's Back and Forward, a reload and
a restart go where a person expects (the list at `/`, a conversation at `/chat/<id>`).

One navigation at a time, and of several waiting (a tap and a Back on a slow phone) only the newest is acted
on; a redraw of the screen on show (a refresh, an alert) never cancels a navigation the person asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import flet as ft

LIST = "/"
ADDRESS_WAIT = 10.0  # seconds a client has to say it put a route in its address bar


def chat_route(conversation_id: str) -> str:
    return f"/chat/{conversation_id}"


def chat_of(route: str) -> str:
    """The conversation a route shows ("" for the list)."""
    path = route.partition("?")[0]
    return path.removeprefix("/chat/") if path.startswith("/chat/") else ""


class Navigator:
    def __init__(self, page: ft.Page, show: Callable[[str], Awaitable[str]]) -> None:
        self.page = page
        self.show = show  # draws a route's screen; returns the route it drew (the list, for a chat gone)
        self.showing = ""
        self._wanted = ""
        self._lock = asyncio.Lock()
        self._rejoining = False
        self._addressing: set[asyncio.Task[None]] = set()
        page.on_route_change = self._changed
        page.on_connect = self._rejoined

    async def go(self, route: str, *, from_address: bool = False) -> None:
        """Show `route`, and put it in the address bar unless it came from there (Back, Forward)."""
        self._wanted = route
        async with self._lock:
            if route != self._wanted:
                return  # a newer navigation came while this one waited
            drawn = await self.show(route)
            before, self.showing = self.showing, drawn
            if drawn != before and (drawn != route or not from_address):
                self._address(drawn)  # its echo finds it shown already

    async def redraw(self, route: str) -> None:
        """Draw `route` again if it is still what is shown and nothing else is on its way."""
        async with self._lock:
            if self.showing == route and self._wanted in ("", route):
                await self.show(route)

    def shown(self, route: str) -> None:
        """What start-up drew on its own."""
        self.showing = self._wanted = route

    async def _changed(self, event: ft.RouteChangeEvent) -> None:
        route = _screen(event.route)
        if self._rejoining:  # not the person's navigation: the address gets back what is shown
            self._rejoining = False
            if route != self.showing:
                self._address(self.showing)
            return
        if route != self.showing:
            await self.go(route, from_address=True)

    async def _rejoined(self, _: object) -> None:
        """A reload rejoins the same session, and Flet's client then reports the route "/" whatever its address
        says: the chat on screen gave way to the list. That one route change is not the person's."""
        self._rejoining = bool(self.showing) and _screen(self.page.route) != self.showing

    def _address(self, route: str) -> None:
        """Put `route` in the address bar, not waiting under the lock: Flet's push_route waits for the client's
        answer with no end, and a client reloaded before it answered never does — every later navigation
        (the first tap after the reload) then queued behind it for good."""
        task = asyncio.create_task(self._push(route))
        self._addressing.add(task)
        task.add_done_callback(self._addressing.discard)

    async def _push(self, route: str) -> None:
        try:
            await asyncio.wait_for(self.page.push_route(route), ADDRESS_WAIT)
        except TimeoutError:
            pass  # the client that was asked is gone; the one that rejoined gets the route from _rejoined


def _screen(route: str) -> str:
    return chat_route(chat_of(route)) if chat_of(route) else LIST

"""The phone's Navigator when a client goes away mid-navigation: a reload before the browser answered a route
push must not leave every later navigation queued behind it (the first tap after the reload did nothing)."""

from __future__ import annotations

import asyncio
from typing import Any

from orkas.phone.navigation import LIST, Navigator, chat_route


class GoneClient:
    """Flet's page as a reloaded tab leaves it: a push_route sent to the old client is never answered."""

    def __init__(self) -> None:
        self.route = "/"
        self.on_route_change: Any = None
        self.on_connect: Any = None
        self.pushed: list[str] = []

    async def push_route(self, route: str) -> None:
        self.pushed.append(route)
        await asyncio.Event().wait()  # no answer, ever


def test_a_push_the_client_never_answers_does_not_hold_the_next_navigation() -> None:
    async def walk() -> list[str]:
        page = GoneClient()
        drawn: list[str] = []

        async def show(route: str) -> str:
            drawn.append(route)
            return route

        nav = Navigator(page, show)  # type: ignore[arg-type]
        nav.shown(LIST)
        await asyncio.wait_for(nav.go(chat_route("a")), 5)  # Back, then the reload: unanswered
        await asyncio.wait_for(nav.go(LIST), 5)
        await asyncio.wait_for(nav.go(chat_route("b")), 5)  # the first tap after the reload
        assert page.pushed == [chat_route("a"), LIST, chat_route("b")]
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()
        return drawn

    assert asyncio.run(walk()) == [chat_route("a"), LIST, chat_route("b")]

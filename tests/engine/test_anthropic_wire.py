"""The Anthropic adapter through the real `anthropic` SDK against the wire-level fake server."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from orkas.engine.events import Done, Error, Retry, TextDelta, ThinkingDelta, ToolEnd
from orkas.engine.messages import (
    AssistantMessage,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from orkas.engine.providers.anthropic import AnthropicProvider
from orkas.engine.providers.base import ProviderSpec
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.providers.vendors import ANTHROPIC_CAPS as DEFAULT_CAPABILITIES
from orkas.engine.retry import RetryPolicy
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.session import InMemorySession
from orkas.engine.tools.files import ListFiles, ReadFile
from tests.engine.helpers import collect, types
from tests.engine.tools_for_tests import PNG_1PX, Picture
from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer, Reply


@pytest.fixture
async def provider(anthropic_server: FakeServer) -> AsyncIterator[AnthropicProvider]:
    p = AnthropicProvider(
        ProviderSpec(
            name="anthropic",
            api="anthropic-messages",
            base_url=anthropic_server.url,
            api_key="sk-test-key",
            capabilities=DEFAULT_CAPABILITIES,
            read_timeout=1.0,
        )
    )
    yield p
    await p.aclose()


FAST = RetryPolicy(base_delay=0.001, max_delay=0.01)


def agent_for(provider: AnthropicProvider, workspace: Path, **config: object) -> Agent:
    return Agent(
        providers=ProviderRegistry({"anthropic": provider}),
        config=RunConfig(model="anthropic/claude-test", **{"retry": FAST, **config}),  # type: ignore[arg-type]
        workspace=workspace,
        tools=[ReadFile(), ListFiles(), Picture()],
    )


async def test_text_usage_and_request_shape(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    anthropic_server.script(wire.reply_text("Hello from the fake.", cache_read=7, cache_write=3))
    session = InMemorySession()
    events = await collect(agent_for(provider, tmp_path), "hi", session=session)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello from the fake."
    done = events[-1]
    assert isinstance(done, Done)
    assert done.usage == Usage(input_tokens=10, output_tokens=5, cache_read_tokens=7, cache_write_tokens=3)
    reply = session.messages()[-1]
    assert isinstance(reply, AssistantMessage) and (reply.provider, reply.model) == (
        "anthropic",
        "claude-test",
    )

    request = anthropic_server.requests[0]
    assert (
        request.headers.get("authorization") == "Bearer sk-test-key"
        or request.headers.get("x-api-key") == "sk-test-key"
    )
    assert "x-stainless-retry-count" not in request.headers or request.headers["x-stainless-retry-count"] == "0"
    body = request.json
    assert body["model"] == "claude-test" and body["stream"] is True
    eph = {"type": "ephemeral"}
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": eph}]}]
    assert "read_file" in body["system"][0]["text"] and body["system"][0]["cache_control"] == eph
    assert body["tools"][-1]["cache_control"] == eph and "cache_control" not in body["tools"][0]
    assert [t["name"] for t in body["tools"]] == ["read_file", "list_files", "picture"]
    assert body["tools"][0]["input_schema"]["required"] == ["path"]


async def test_tool_use_with_streamed_json_runs_the_tool(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("contents of a\n")
    anthropic_server.script(
        wire.message(wire.text("Reading."), wire.tool_use("read_file", {"path": "a.txt"}, id="toolu_9")),
        wire.reply_text("It says: contents of a"),
    )
    events = await collect(agent_for(provider, tmp_path))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert not end.is_error and "contents of a" in end.content[0].text  # type: ignore[union-attr]
    second = anthropic_server.requests[1].json["messages"]
    assert second[1]["role"] == "assistant"
    assert second[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_9",
        "name": "read_file",
        "input": {"path": "a.txt"},
    }
    result = second[2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_9" and result["is_error"] is False
    assert "contents of a" in result["content"][0]["text"]
    assert isinstance(events[-1], Done) and events[-1].tool_loops == 1


async def test_truncated_tool_json_is_answered_with_an_error(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    anthropic_server.script(
        wire.message(
            wire.tool_use("read_file", {}, id="toolu_x"),
            raw_json={0: '{"path": "a.t'},
            stop_reason="max_tokens",
        ),
        wire.reply_text("sorry"),
    )
    events = await collect(agent_for(provider, tmp_path))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.is_error and "cut off by the output limit" in end.content[0].text  # type: ignore[union-attr]
    assert isinstance(events[-1], Done)


async def test_thinking_and_redacted_thinking_round_trip_with_signatures(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    anthropic_server.script(
        wire.message(
            wire.thinking("Let me think.", signature="sig-abc"),
            wire.redacted("opaque=="),
            wire.tool_use("list_files", {}, id="toolu_1"),
        ),
        wire.reply_text("There are no files."),
    )
    session = InMemorySession()
    events = await collect(agent_for(provider, tmp_path, reasoning="low"), session=session)
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Let me think."
    stored = session.messages()[1]
    assert isinstance(stored, AssistantMessage)
    assert stored.content[0] == ThinkingBlock(text="Let me think.", signature="sig-abc")
    assert stored.content[1] == ThinkingBlock(text="", signature="opaque==", redacted=True)
    first = anthropic_server.requests[0].json
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first["max_tokens"] > 2048
    replayed = anthropic_server.requests[1].json["messages"][1]["content"]
    assert replayed[0] == {"type": "thinking", "thinking": "Let me think.", "signature": "sig-abc"}
    assert replayed[1] == {"type": "redacted_thinking", "data": "opaque=="}


async def test_images_go_out_in_user_content_and_tool_results(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    anthropic_server.script(wire.message(wire.tool_use("picture", {}, id="toolu_p")), wire.reply_text("red"))
    message = UserMessage(content=(TextBlock(text="compare"), ImageBlock(data=PNG_1PX, media_type="image/png")))
    result = await agent_for(provider, tmp_path).run_to_end(message, session=InMemorySession())
    assert result.text == "red"
    first = anthropic_server.requests[0].json["messages"][0]["content"]
    assert first[1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG_1PX},
        "cache_control": {"type": "ephemeral"},  # the latest message carries the cache breakpoint
    }
    base64.b64decode(first[1]["source"]["data"])
    tool_result = anthropic_server.requests[1].json["messages"][2]["content"][0]
    assert [c["type"] for c in tool_result["content"]] == ["text", "image"]


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
async def test_each_retryable_status_is_retried(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path, status: int
) -> None:
    anthropic_server.script(wire.error(status, "api_error", f"status {status}"), wire.reply_text("recovered"))
    events = await collect(agent_for(provider, tmp_path))
    retry = next(e for e in events if isinstance(e, Retry))
    assert retry.attempt == 1 and str(status) in retry.reason
    assert isinstance(events[-1], Done) and events[-1].text == "recovered"
    assert len(anthropic_server.requests) == 2
    # The user message went out identically both times: written once, never duplicated.
    assert anthropic_server.requests[0].json["messages"] == anthropic_server.requests[1].json["messages"]


async def test_retry_after_ms_is_honoured(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    anthropic_server.script(
        wire.error(429, "rate_limit_error", "slow down", headers={"retry-after-ms": "150"}),
        wire.error(429, "rate_limit_error", "slow down", headers={"retry-after": "0"}),
        wire.reply_text("ok"),
    )
    events = await collect(agent_for(provider, tmp_path))
    waits = [e.wait for e in events if isinstance(e, Retry)]
    assert waits == [pytest.approx(0.15), 0.0]
    assert isinstance(events[-1], Done)


@pytest.mark.parametrize(
    ("status", "error_type", "kind"),
    [
        (400, "invalid_request_error", "provider"),
        (401, "authentication_error", "auth"),
        (403, "permission_error", "auth"),
        (404, "not_found_error", "provider"),
        (413, "request_too_large", "provider"),
        (422, "invalid_request_error", "provider"),
    ],
)
async def test_non_retryable_statuses_fail_at_once(
    anthropic_server: FakeServer,
    provider: AnthropicProvider,
    tmp_path: Path,
    status: int,
    error_type: str,
    kind: str,
) -> None:
    anthropic_server.script(wire.error(status, error_type, "you did something wrong"))
    events = await collect(agent_for(provider, tmp_path))
    assert "retry" not in types(events)
    error = events[-1]
    assert isinstance(error, Error) and error.kind == kind
    assert "you did something wrong" in error.message and f"HTTP {status}" in error.message


async def test_prompt_too_long_is_context_overflow(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    anthropic_server.script(wire.error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000"))
    events = await collect(agent_for(provider, tmp_path))
    assert isinstance(events[-1], Error) and events[-1].kind == "context_overflow"


async def test_sse_error_before_content_is_retried(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    frames = wire.events([wire.text("never shown")])
    anthropic_server.script(
        Reply(events=[frames[0], wire.sse_error("overloaded_error", "Overloaded")]),
        wire.reply_text("second try"),
    )
    events = await collect(agent_for(provider, tmp_path))
    assert types(events).count("retry") == 1 and "Overloaded" in next(e for e in events if isinstance(e, Retry)).reason
    assert isinstance(events[-1], Done) and events[-1].text == "second try"


async def test_sse_invalid_request_error_is_not_retried(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    anthropic_server.script(Reply(events=[wire.sse_error("invalid_request_error", "bad thing")]))
    events = await collect(agent_for(provider, tmp_path))
    assert "retry" not in types(events) and isinstance(events[-1], Error)


async def test_reset_mid_stream_keeps_the_partial_text_and_does_not_retry(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    frames = wire.events([wire.text("The answer is forty")])
    # message_start, ping, block start, first delta → then the connection is reset.
    anthropic_server.script(Reply(events=frames, reset_after=4))
    session = InMemorySession()
    events = await collect(agent_for(provider, tmp_path), session=session)
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown and "The answer is forty".startswith(shown)
    error = events[-1]
    assert isinstance(error, Error) and error.partial_text == shown and "cut off" in error.message
    kept = session.messages()[-1]
    assert isinstance(kept, AssistantMessage) and kept.partial and kept.text == shown
    assert len(anthropic_server.requests) == 1


async def test_reset_before_content_is_retried(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    anthropic_server.script(Reply(events=wire.events([wire.text("x")]), reset_after=1), wire.reply_text("ok"))
    events = await collect(agent_for(provider, tmp_path))
    assert types(events).count("retry") == 1 and isinstance(events[-1], Done)


async def test_stall_after_headers_times_out_and_retries(
    anthropic_server: FakeServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    anthropic_server.script(Reply(events=wire.events([wire.text("late")]), stall=3.0), wire.reply_text("fresh"))
    events = await collect(agent_for(provider, tmp_path))
    retry = next(e for e in events if isinstance(e, Retry))
    assert "time" in retry.reason.lower() or "stall" in retry.reason.lower()
    assert isinstance(events[-1], Done) and events[-1].text == "fresh"


async def test_connection_refused_is_a_network_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = AnthropicProvider(
        ProviderSpec(name="anthropic", api="anthropic-messages", base_url=f"http://127.0.0.1:{port}", api_key="k")
    )
    events = await collect(agent_for(p, tmp_path, retry=RetryPolicy(max_retries=1, base_delay=0.001)))
    await p.aclose()
    error = events[-1]
    assert isinstance(error, Error) and error.kind == "provider"
    assert "could not reach" in error.message and types(events).count("retry") == 1


async def test_validate_auth(anthropic_server: FakeServer, provider: AnthropicProvider) -> None:
    anthropic_server.path = "/v1/models"
    anthropic_server.script(wire.error(401, "authentication_error", "invalid x-api-key"))
    from orkas.core.errors import ProviderError

    with pytest.raises(ProviderError) as info:
        await provider.validate_auth()
    assert info.value.kind == "auth"


def test_tool_use_block_is_neutral() -> None:
    block = ToolUseBlock(id="a", name="b", input={"c": 1})
    assert block.type == "tool_use"

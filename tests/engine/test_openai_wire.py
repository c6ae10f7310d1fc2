"""The OpenAI-compatible adapter over real httpx against the wire-level fake server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from orkas.engine.events import Done, Error, Retry, TextDelta, ThinkingDelta, ToolEnd
from orkas.engine.messages import AssistantMessage, ImageBlock, TextBlock, ThinkingBlock, Usage, UserMessage
from orkas.engine.providers.base import ProviderSpec
from orkas.engine.providers.openai_compat import OpenAICompatProvider
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.providers.vendors import OPENAI_CAPS as DEFAULT_CAPABILITIES
from orkas.engine.retry import RetryPolicy
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.session import InMemorySession
from orkas.engine.tools.files import ListFiles, ReadFile
from tests.engine.helpers import collect, types
from tests.engine.tools_for_tests import PNG_1PX, Picture
from tests.fakes import openai as wire
from tests.fakes.server import FakeServer, Reply

FAST = RetryPolicy(base_delay=0.001, max_delay=0.01)


@pytest.fixture
async def provider(openai_server: FakeServer) -> AsyncIterator[OpenAICompatProvider]:
    p = OpenAICompatProvider(
        ProviderSpec(
            name="deepseek",
            api="openai-chat",
            base_url=openai_server.url + "/v1",
            api_key="sk-oa",
            headers={"X-Title": "Orkas"},
            capabilities=DEFAULT_CAPABILITIES,
            read_timeout=1.0,
        )
    )
    yield p
    await p.aclose()


def agent_for(provider: OpenAICompatProvider, workspace: Path, **config: object) -> Agent:
    return Agent(
        providers=ProviderRegistry({provider.name: provider}),
        config=RunConfig(**{"model": "deepseek-chat", "retry": FAST, **config}),  # type: ignore[arg-type]
        workspace=workspace,
        tools=[ReadFile(), ListFiles(), Picture()],
    )


async def test_text_usage_headers_and_body(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    openai_server.script(Reply(events=wire.text_events("Hello, world.", usage=(12, 4))))
    session = InMemorySession()
    events = await collect(agent_for(provider, tmp_path), "hi", session=session)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello, world."
    done = events[-1]
    assert isinstance(done, Done) and done.usage == Usage(input_tokens=12, output_tokens=4)
    reply = session.messages()[-1]
    assert isinstance(reply, AssistantMessage) and (reply.provider, reply.model) == (
        "deepseek",
        "deepseek-chat",
    )

    request = openai_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-oa" and request.headers["x-title"] == "Orkas"
    body = request.json
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"][0]["role"] == "system" and "read_file" in body["messages"][0]["content"]
    assert body["messages"][1] == {"role": "user", "content": "hi"}
    assert body["tools"][0]["function"]["name"] == "read_file" and body["max_tokens"] == 8192


async def test_streamed_tool_call_fragments_run_the_tool(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    (tmp_path / "b.txt").write_text("bravo\n")
    openai_server.script(
        Reply(
            events=wire.tool_events(
                [("call_1", "read_file", {"path": "b.txt"}), ("call_2", "list_files", {})], text="Looking."
            )
        ),
        wire.reply_text("Found bravo."),
    )
    events = await collect(agent_for(provider, tmp_path))
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert sorted(e.name for e in ends) == ["list_files", "read_file"] and not any(e.is_error for e in ends)
    messages = openai_server.requests[1].json["messages"]
    assistant = messages[2]
    assert assistant["role"] == "assistant" and assistant["content"] == "Looking."
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_1", "call_2"]
    assert assistant["tool_calls"][0]["function"] == {"name": "read_file", "arguments": '{"path": "b.txt"}'}
    assert [m["role"] for m in messages[3:]] == ["tool", "tool"]
    assert messages[3]["tool_call_id"] == "call_1" and "bravo" in messages[3]["content"]
    assert isinstance(events[-1], Done) and events[-1].text == "Found bravo."


async def test_deepseek_reasoning_content_is_thinking_and_replayed(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    frames = wire.text_events("", reasoning="I should list files.")
    tool_frames = wire.tool_events([("call_r", "list_files", {})])
    openai_server.script(Reply(events=frames[:3] + tool_frames[1:]), wire.reply_text("Nothing there."))
    session = InMemorySession()
    events = await collect(agent_for(provider, tmp_path), session=session)
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "I should list files."
    stored = session.messages()[1]
    assert isinstance(stored, AssistantMessage) and stored.content[0] == ThinkingBlock(text="I should list files.")
    replay = openai_server.requests[1].json["messages"][2]
    assert replay["reasoning_content"] == "I should list files."


async def test_images_as_user_parts_and_moved_out_of_tool_results(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    openai_server.script(Reply(events=wire.tool_events([("call_p", "picture", {})])), wire.reply_text("red"))
    message = UserMessage(content=(TextBlock(text="look"), ImageBlock(data=PNG_1PX, media_type="image/png")))
    result = await agent_for(provider, tmp_path).run_to_end(message, session=InMemorySession())
    assert result.text == "red"
    first = openai_server.requests[0].json["messages"][1]["content"]
    assert first[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_1PX}"}}
    after_tool = openai_server.requests[1].json["messages"]
    assert after_tool[3]["role"] == "tool" and "a red pixel" in after_tool[3]["content"]
    assert after_tool[4]["role"] == "user"  # the image follows the tool result as user content
    assert after_tool[4]["content"][-1]["type"] == "image_url"


async def test_cached_tokens_are_reported(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    frames = wire.text_events("ok")
    frames[-2] = wire.usage_chunk(100, 3, cached=80)
    openai_server.script(Reply(events=frames))
    events = await collect(agent_for(provider, tmp_path))
    assert isinstance(events[-1], Done)
    assert events[-1].usage == Usage(input_tokens=20, output_tokens=3, cache_read_tokens=80)
    assert events[-1].usage.prompt_tokens == 100


async def test_missing_tool_call_ids_get_unique_ones(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    frames = [
        f.replace(b'"id": "call_a", ', b"").replace(b'"id": "call_b", ', b"")
        for f in wire.tool_events([("call_a", "list_files", {}), ("call_b", "list_files", {})])
    ]
    openai_server.script(Reply(events=frames), wire.reply_text("ok"))
    session = InMemorySession()
    events = await collect(agent_for(provider, tmp_path), session=session)
    assert isinstance(events[-1], Done)
    call = session.messages()[1]
    assert isinstance(call, AssistantMessage)
    ids = [b.id for b in call.tool_uses]
    assert len(ids) == 2 and len(set(ids)) == 2 and all(ids)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
async def test_each_retryable_status_is_retried(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path, status: int
) -> None:
    openai_server.script(wire.error(status, f"status {status}"), wire.reply_text("recovered"))
    events = await collect(agent_for(provider, tmp_path))
    assert types(events).count("retry") == 1
    assert isinstance(events[-1], Done) and events[-1].text == "recovered"


async def test_retry_after_seconds_is_honoured(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    openai_server.script(wire.error(429, "Rate limit reached", headers={"retry-after": "0.1"}), wire.reply_text("ok"))
    events = await collect(agent_for(provider, tmp_path))
    assert [e.wait for e in events if isinstance(e, Retry)] == [pytest.approx(0.1)]


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "provider"),
        (401, "auth"),
        (403, "auth"),
        (404, "provider"),
        (413, "provider"),
        (422, "provider"),
    ],
)
async def test_non_retryable_statuses_fail_at_once(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path, status: int, kind: str
) -> None:
    openai_server.script(wire.error(status, "Incorrect API key provided" if status == 401 else "nope"))
    events = await collect(agent_for(provider, tmp_path))
    assert "retry" not in types(events)
    assert isinstance(events[-1], Error) and events[-1].kind == kind and f"HTTP {status}" in events[-1].message


async def test_context_length_exceeded_is_context_overflow(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    openai_server.script(
        wire.error(400, "This model's maximum context length is 8192 tokens", code="context_length_exceeded")
    )
    events = await collect(agent_for(provider, tmp_path))
    assert isinstance(events[-1], Error) and events[-1].kind == "context_overflow"


async def test_error_chunk_before_content_is_retried(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    openai_server.script(Reply(events=[wire.stream_error("The server had an error")]), wire.reply_text("second"))
    events = await collect(agent_for(provider, tmp_path))
    assert types(events).count("retry") == 1 and isinstance(events[-1], Done)


async def test_reset_mid_stream_keeps_partial_text(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    frames = wire.text_events("abcdefgh")
    openai_server.script(Reply(events=frames, reset_after=2))  # role chunk, first half, then reset
    session = InMemorySession()
    events = await collect(agent_for(provider, tmp_path), session=session)
    error = events[-1]
    assert isinstance(error, Error) and error.partial_text == "abcd"
    kept = session.messages()[-1]
    assert isinstance(kept, AssistantMessage) and kept.partial and kept.text == "abcd"
    assert len(openai_server.requests) == 1


async def test_stream_that_ends_early_is_retried(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    openai_server.script(Reply(events=wire.text_events("x")[:1]), wire.reply_text("whole"))
    events = await collect(agent_for(provider, tmp_path))
    assert types(events).count("retry") == 1 and isinstance(events[-1], Done) and events[-1].text == "whole"


async def test_stall_times_out_and_retries(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    openai_server.script(Reply(events=wire.text_events("late"), stall=3.0), wire.reply_text("fresh"))
    events = await collect(agent_for(provider, tmp_path))
    assert types(events).count("retry") == 1 and isinstance(events[-1], Done)


async def test_openai_uses_max_completion_tokens(openai_server: FakeServer, tmp_path: Path) -> None:
    p = OpenAICompatProvider(
        ProviderSpec(
            name="openai",
            api="openai-chat",
            base_url=openai_server.url,
            api_key="k",
            max_tokens_param="max_completion_tokens",
        )
    )
    openai_server.script(wire.reply_text("ok"))
    await collect(agent_for(p, tmp_path, model="openai/gpt-test", max_tokens=1000))
    await p.aclose()
    body = openai_server.requests[0].json
    assert body["max_completion_tokens"] == 1000 and "max_tokens" not in body and body["model"] == "gpt-test"


async def test_validate_auth_and_complete(openai_server: FakeServer, provider: OpenAICompatProvider) -> None:
    from orkas.core.errors import ProviderError
    from orkas.engine.messages import user_text
    from orkas.engine.providers.base import ProviderRequest, complete

    openai_server.script(wire.reply_text("whole answer"))
    end = await complete(provider, ProviderRequest(model="m", messages=[user_text("hi")]))
    assert end.message.text == "whole answer" and end.stop_reason == "end_turn"

    openai_server.path = "/v1/models"
    openai_server.script(wire.error(401, "Incorrect API key provided"))
    with pytest.raises(ProviderError) as info:
        await provider.validate_auth()
    assert info.value.kind == "auth" and info.value.status == 401


async def test_the_session_id_is_the_cache_key_within_64_characters(openai_server: FakeServer, tmp_path: Path) -> None:
    from dataclasses import replace

    from orkas.engine.providers.openai_compat.request import cache_key

    caps = replace(DEFAULT_CAPABILITIES, prompt_cache=True)
    p = OpenAICompatProvider(
        ProviderSpec(name="openai", api="openai-chat", base_url=openai_server.url, api_key="k", capabilities=caps)
    )
    openai_server.script(wire.reply_text("a"), wire.reply_text("b"))
    long_id = "gconv-" + "x" * 90
    agent = agent_for(p, tmp_path, model="openai/gpt-test")
    await agent.run_to_end("one", session=InMemorySession(session_id=long_id))
    await agent.run_to_end("two", session=InMemorySession(session_id="short-id"))
    await p.aclose()
    keys = [r.json["prompt_cache_key"] for r in openai_server.requests]
    assert len(keys[0]) <= 64 and keys[0] == cache_key(long_id) and keys[0].startswith("gconv-")
    assert keys[1] == "short-id" and cache_key(long_id) != cache_key(long_id + "y")


async def test_a_conversations_temperature_reaches_the_wire(
    openai_server: FakeServer, provider: OpenAICompatProvider, tmp_path: Path
) -> None:
    openai_server.script(Reply(events=wire.text_events("Ok.")))
    await collect(agent_for(provider, tmp_path, temperature=0.2), "hi", session=InMemorySession())
    assert openai_server.requests[-1].json["temperature"] == 0.2

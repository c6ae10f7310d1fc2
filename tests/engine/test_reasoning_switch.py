"""Switching models mid-conversation never sends a signature to a model that did not make it."""

from __future__ import annotations

from pathlib import Path

from orkas.engine.events import Done
from orkas.engine.messages import AssistantMessage, ThinkingBlock
from orkas.engine.providers.anthropic import AnthropicProvider
from orkas.engine.providers.base import ProviderSpec
from orkas.engine.providers.openai_compat import OpenAICompatProvider
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.providers.vendors import ANTHROPIC_CAPS, OPENAI_CAPS
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.session import InMemorySession
from tests.fakes import anthropic as a_wire
from tests.fakes import openai as o_wire
from tests.fakes.server import FakeServer, Recorded, Reply

ISSUED = {"sig-claude-1"}


def strict_anthropic(request: Recorded) -> Reply:
    """Like the real API: a thinking block must carry a signature this model issued."""
    for message in request.json["messages"]:
        for block in message["content"]:
            if block.get("type") == "thinking" and block.get("signature") not in ISSUED:
                return a_wire.error(400, "invalid_request_error", "messages: Invalid `signature` in `thinking` block")
    if len(request.json["messages"]) == 1:
        return a_wire.message(a_wire.thinking("Claude reasons.", signature="sig-claude-1"), a_wire.text("Claude here."))
    return a_wire.reply_text("Claude again.")


def strict_openai(request: Recorded) -> Reply:
    """Reasoning replayed to this model must be its own."""
    for message in request.json["messages"]:
        if message.get("reasoning_content") and message["reasoning_content"] != "GPT reasons.":
            return o_wire.error(400, "foreign reasoning_content")
    return Reply(events=o_wire.text_events("GPT here.", reasoning="GPT reasons."))


async def test_anthropic_then_openai_then_anthropic(
    tmp_path: Path, anthropic_server: FakeServer, openai_server: FakeServer
) -> None:
    anthropic_server.responder = strict_anthropic
    openai_server.responder = strict_openai
    claude = AnthropicProvider(
        ProviderSpec(
            name="anthropic",
            api="anthropic-messages",
            base_url=anthropic_server.url,
            api_key="k",
            capabilities=ANTHROPIC_CAPS,
        )
    )
    gpt = OpenAICompatProvider(
        ProviderSpec(
            name="deepseek",
            api="openai-chat",
            base_url=openai_server.url + "/v1",
            api_key="k",
            capabilities=OPENAI_CAPS,
        )
    )
    registry = ProviderRegistry({"anthropic": claude, "deepseek": gpt})
    session = InMemorySession()

    def agent(model: str) -> Agent:
        return Agent(providers=registry, config=RunConfig(model=model, reasoning="low"), workspace=tmp_path)

    for model, expected in [
        ("anthropic/claude-a", "Claude here."),
        ("deepseek/gpt-x", "GPT here."),
        ("anthropic/claude-a", "Claude again."),
        ("deepseek/gpt-x", "GPT here."),
    ]:
        result = await agent(model).run_to_end("next", session=session)
        assert isinstance(result.done, Done), result.error
        assert result.text == expected

    producers = [(m.provider, m.model) for m in session.messages() if isinstance(m, AssistantMessage)]
    assert producers == [
        ("anthropic", "claude-a"),
        ("deepseek", "gpt-x"),
        ("anthropic", "claude-a"),
        ("deepseek", "gpt-x"),
    ]
    first = session.messages()[1]
    assert isinstance(first, AssistantMessage) and first.content[0] == ThinkingBlock(
        text="Claude reasons.", signature="sig-claude-1"
    )
    replayed = anthropic_server.requests[1].json["messages"][1]["content"]
    assert replayed[0]["type"] == "thinking" and replayed[0]["signature"] == "sig-claude-1"  # verbatim to its model
    to_gpt = openai_server.requests[0].json["messages"]
    assert not any("reasoning_content" in m for m in to_gpt)  # Claude's reasoning never went to another model
    await claude.aclose()
    await gpt.aclose()

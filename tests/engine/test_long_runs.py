"""Long conversations against the wire-level fake server with a small context window."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from orkas.engine.events import Compaction, Done, Error, Event, RunWarning
from orkas.engine.providers.anthropic import AnthropicProvider
from orkas.engine.providers.base import ProviderSpec
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.providers.vendors import ANTHROPIC_CAPS
from orkas.engine.retry import RetryPolicy
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.session import InMemorySession
from orkas.engine.tools.files import ListFiles, ReadFile
from tests.engine.token_reference import fast_reference_tokens
from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer, Recorded, Reply
from tests.validators import request_violations

WINDOW = 16_000
CONSTRAINT = "Always answer in French, and never delete anything."
TODO = "- [ ] write the migration guide"


def respond(request: Recorded) -> Reply:
    body = request.json
    if _is_summary(body):
        return wire.reply_text("Summary: the user is reviewing files one by one; answers go in French.")
    last = body["messages"][-1]
    if any(b.get("type") == "tool_result" for b in last["content"]):
        return wire.reply_text(f"C'est noté.\n{TODO}")
    prompt = " ".join(b.get("text", "") for b in last["content"] if b.get("type") == "text")
    number = int(prompt.rsplit("#", 1)[-1]) if "#" in prompt else 0
    name = "huge.txt" if number % 25 == 7 else f"big{number % 5}.txt"
    return wire.message(wire.tool_use("read_file", {"path": name}, id=f"toolu_{number:04d}"))


def _system(body: dict[str, Any]) -> str:
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(block["text"] for block in system)


def _is_summary(body: dict[str, Any]) -> bool:
    return "context compaction engine" in _system(body)


def _uncached(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages without cache markers, which move to the newest message on every call."""
    return [
        {**m, "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]} for m in messages
    ]


def request_tokens(body: dict[str, Any]) -> int:
    text = _system(body) + json.dumps(body["messages"], ensure_ascii=False)
    return fast_reference_tokens(text + json.dumps(body.get("tools", []), ensure_ascii=False))


@pytest.fixture
async def agent(tmp_path: Path, anthropic_server: FakeServer) -> AsyncIterator[Agent]:
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    for i in range(5):
        lines = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(250)]  # ~3,000 tokens
        (tmp_path / f"big{i}.txt").write_text("\n".join(lines))
    (tmp_path / "huge.txt").write_text("\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(1500)))
    provider = AnthropicProvider(
        ProviderSpec(
            name="anthropic",
            api="anthropic-messages",
            base_url=anthropic_server.url,
            api_key="k",
            capabilities=ANTHROPIC_CAPS,
        )
    )
    yield Agent(
        providers=ProviderRegistry({"anthropic": provider}),
        config=RunConfig(model="anthropic/claude-test", context_window=WINDOW, retry=RetryPolicy(base_delay=0.001)),
        workspace=tmp_path,
        tools=[ReadFile(), ListFiles()],
    )
    await provider.aclose()


@pytest.mark.slow
async def test_200_turns_with_huge_outputs_stay_inside_a_small_window(
    agent: Agent, anthropic_server: FakeServer
) -> None:
    anthropic_server.responder = respond  # every request answered by the script above
    session = InMemorySession()
    events: list[Event] = []
    first = await agent.run_to_end(CONSTRAINT, session=session)
    assert first.done is not None
    for turn in range(1, 200):
        async for event in agent.run(f"Review the next file, please #{turn}", session=session):
            events.append(event)
        assert isinstance(events[-1], Done), events[-1]

    compactions = [e for e in events if isinstance(e, Compaction)]
    assert len(compactions) >= 10
    assert {c.method for c in compactions} >= {"summary", "shrink"}
    assert any(isinstance(e, RunWarning) and "too large" in e.message for e in events)

    bodies = [r.json for r in anthropic_server.requests if not _is_summary(r.json)]
    max_tokens = bodies[0]["max_tokens"]
    for index, body in enumerate(bodies):
        assert request_tokens(body) + max_tokens <= WINDOW, f"request {index} does not fit the window"
        assert request_violations(body["messages"]) == [], f"request {index} breaks pairing"

    # After the first summary, every request carries the pinned items byte-exact.
    first_summary = next(
        i for i, b in enumerate(bodies) if "[Orkas context summary" in json.dumps(b, ensure_ascii=False)
    )
    for body in bodies[first_summary:]:
        sent = json.dumps(body["messages"], ensure_ascii=False)
        assert json.dumps(CONSTRAINT, ensure_ascii=False)[1:-1] in sent
        assert "write the migration guide" in sent


@pytest.mark.slow
async def test_the_prefix_is_never_rewritten_between_compactions(agent: Agent, anthropic_server: FakeServer) -> None:
    anthropic_server.responder = respond
    session = InMemorySession()
    compacted_at: set[int] = set()
    for turn in range(40):
        async for event in agent.run(f"next #{turn}", session=session):
            if isinstance(event, Compaction):
                compacted_at.add(len(anthropic_server.requests))
    bodies = [_uncached(r.json["messages"]) for r in anthropic_server.requests if not _is_summary(r.json)]
    indexes = [i for i, r in enumerate(anthropic_server.requests) if not _is_summary(r.json)]
    assert compacted_at
    for (i, previous), (j, current) in zip(
        zip(indexes, bodies, strict=True), list(zip(indexes, bodies, strict=True))[1:], strict=False
    ):
        if any(i < point <= j for point in compacted_at):
            continue  # a compaction happened between these two requests
        # Everything sent before is sent again, byte for byte, at the start of the next request.
        assert current[: len(previous)] == previous, f"request {j} rewrote the prefix of request {i}"


CHINESE_ANSWER = "我已经读完了这个文件。主要内容是关于本地优先的智能体工作区，所有数据都保存在用户自己的电脑上。" * 3


def respond_in_chinese(request: Recorded) -> Reply:
    body = request.json
    if _is_summary(body):
        return wire.reply_text("摘要：用户正在逐个审阅中文文件，并要求用中文回答。")
    last = body["messages"][-1]
    if any(b.get("type") == "tool_result" for b in last["content"]):
        return wire.reply_text(CHINESE_ANSWER)
    return wire.message(wire.tool_use("read_file", {"path": "中文.txt"}, id=f"toolu_{len(body['messages'])}"))


@pytest.mark.slow
async def test_an_all_chinese_conversation_compacts_at_the_right_point(
    agent: Agent, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    (tmp_path / "中文.txt").write_text(
        "当上下文窗口快要满的时候，系统会先把旧的工具输出遮蔽掉，如果还不够，再调用模型生成摘要。\n" * 40
    )
    anthropic_server.responder = respond_in_chinese
    session = InMemorySession()
    compactions = 0
    for turn in range(30):
        async for event in agent.run(f"请阅读中文文件并总结要点，第{turn}次。", session=session):
            compactions += isinstance(event, Compaction)
            if isinstance(event, Done | Error):
                assert isinstance(event, Done), event
    bodies = [r.json for r in anthropic_server.requests if not _is_summary(r.json)]
    real = [request_tokens(b) for b in bodies]
    usable = WINDOW - bodies[0]["max_tokens"] - 2048
    assert compactions >= 2
    assert max(real) + bodies[0]["max_tokens"] <= WINDOW  # never too late
    assert max(real) >= 0.6 * usable  # and not needlessly early: the window is actually used

"""Rotation and fallback through real adapters against the fake servers."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from orkas.adapter.providers.pool import Candidate, RotatingProvider
from orkas.engine.events import Done, Error, Event, ProviderFallback, Retry, TextDelta
from orkas.engine.messages import AssistantMessage
from orkas.engine.providers.anthropic import AnthropicProvider
from orkas.engine.providers.base import ProviderSpec
from orkas.engine.providers.openai_compat import OpenAICompatProvider
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.providers.vendors import ANTHROPIC_CAPS, OPENAI_CAPS
from orkas.engine.retry import RetryPolicy
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.session import InMemorySession
from tests.fakes import anthropic as a_wire
from tests.fakes import openai as o_wire
from tests.fakes.server import FakeServer, Reply


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def anthropic(server: FakeServer, key: str) -> Candidate:
    spec = ProviderSpec(
        name="anthropic",
        api="anthropic-messages",
        base_url=server.url,
        api_key=key,
        capabilities=ANTHROPIC_CAPS,
        read_timeout=5.0,
    )
    return Candidate(AnthropicProvider(spec), "claude-test", key)


def openai(server: FakeServer) -> Candidate:
    spec = ProviderSpec(
        name="openai", api="openai-chat", base_url=server.url + "/v1", api_key="oa-key", capabilities=OPENAI_CAPS
    )
    return Candidate(OpenAICompatProvider(spec), "gpt-test", "oa-key")


def key_of(server: FakeServer, index: int) -> str:
    headers = server.requests[index].headers
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


@pytest.fixture
async def clock() -> AsyncIterator[Clock]:
    yield Clock()


async def run(pool: RotatingProvider, prompt: str = "hi") -> list[Event]:
    agent = Agent(
        providers=ProviderRegistry({"anthropic": pool}),
        config=RunConfig(model="anthropic/claude-test", retry=RetryPolicy(base_delay=0.001, max_delay=0.01)),
        workspace=Path.cwd(),
    )
    return [e async for e in agent.run(prompt, session=InMemorySession())]


@pytest.mark.parametrize(
    ("status", "error_type", "message"),
    [
        (401, "authentication_error", "invalid x-api-key"),
        (403, "permission_error", "your plan does not allow this model"),
        (402, "billing_error", "payment required"),
        (400, "invalid_request_error", "Your credit balance is too low"),
        (429, "rate_limit_error", "You exceeded your monthly spend limit"),
    ],
)
async def test_account_failures_cool_the_key_down_and_rotate(
    anthropic_server: FakeServer, clock: Clock, status: int, error_type: str, message: str
) -> None:
    anthropic_server.script(
        a_wire.error(status, error_type, message), a_wire.reply_text("from key two"), a_wire.reply_text("still key two")
    )
    pool = RotatingProvider(
        [[anthropic(anthropic_server, "key-one"), anthropic(anthropic_server, "key-two")]], clock=clock
    )
    events = await run(pool)
    fallback = next(e for e in events if isinstance(e, ProviderFallback))
    assert fallback.failed == "anthropic/claude-test (key-one)" and fallback.using == "anthropic/claude-test (key-two)"
    assert isinstance(events[-1], Done) and events[-1].text == "from key two"
    second = await run(pool)
    assert isinstance(second[-1], Done) and not any(isinstance(e, ProviderFallback) for e in second)
    assert [key_of(anthropic_server, i) for i in range(3)] == ["key-one", "key-two", "key-two"]  # key one rests
    await pool.aclose()


async def test_the_cooldown_expires(anthropic_server: FakeServer, clock: Clock) -> None:
    anthropic_server.script(
        a_wire.error(401, "authentication_error", "bad"), a_wire.reply_text("two"), a_wire.reply_text("one again")
    )
    one, two = anthropic(anthropic_server, "key-one"), anthropic(anthropic_server, "key-two")
    pool = RotatingProvider([[one, two]], clock=clock)
    await run(pool)
    clock.now += 601
    events = await run(pool)
    assert isinstance(events[-1], Done) and events[-1].text == "one again"
    assert key_of(anthropic_server, 2) == "key-one"
    await pool.aclose()


async def test_pools_are_used_least_recently_used_first(anthropic_server: FakeServer, clock: Clock) -> None:
    anthropic_server.script(*(a_wire.reply_text(f"answer {i}") for i in range(4)))
    pool = RotatingProvider([[anthropic(anthropic_server, "k1"), anthropic(anthropic_server, "k2")]], clock=clock)
    for _ in range(4):
        await run(pool)
    assert [key_of(anthropic_server, i) for i in range(4)] == ["k1", "k2", "k1", "k2"]
    await pool.aclose()


async def test_a_plain_rate_limit_rotates_to_the_next_key_at_once(anthropic_server: FakeServer, clock: Clock) -> None:
    anthropic_server.script(
        a_wire.error(429, "rate_limit_error", "Number of requests per minute exceeded", {"retry-after": "20"}),
        a_wire.reply_text("from key two"),
        a_wire.reply_text("key two again"),
        a_wire.reply_text("key one rested"),
    )
    pool = RotatingProvider([[anthropic(anthropic_server, "k1"), anthropic(anthropic_server, "k2")]], clock=clock)
    events = await run(pool)
    assert not any(isinstance(e, Retry) for e in events)  # no waiting, no second try of the same key
    fallback = next(e for e in events if isinstance(e, ProviderFallback))
    assert fallback.reason == "rate_limit" and fallback.using == "anthropic/claude-test (k2)"
    assert isinstance(events[-1], Done) and events[-1].text == "from key two"
    assert pool.cooldowns["k1"] == clock.now + 20  # resting as long as the server asked
    await run(pool)
    clock.now += 21
    last = await run(pool)
    assert isinstance(last[-1], Done) and last[-1].text == "key one rested"
    assert [key_of(anthropic_server, i) for i in range(4)] == ["k1", "k2", "k2", "k1"]
    await pool.aclose()


async def test_a_rate_limit_on_the_last_key_and_server_errors_go_to_the_run_loop(
    anthropic_server: FakeServer, clock: Clock
) -> None:
    anthropic_server.script(
        a_wire.error(429, "rate_limit_error", "Number of requests per minute exceeded"),
        a_wire.error(529, "overloaded_error", "Overloaded"),
        a_wire.reply_text("ok"),
    )
    pool = RotatingProvider([[anthropic(anthropic_server, "k1")]], clock=clock)
    events = await run(pool)
    assert [type(e) for e in events if isinstance(e, Retry | ProviderFallback)] == [Retry, Retry]
    assert not pool.cooldowns and isinstance(events[-1], Done)
    assert [key_of(anthropic_server, i) for i in range(3)] == ["k1", "k1", "k1"]
    await pool.aclose()


async def test_rate_limits_on_every_key_wait_on_the_last_one(anthropic_server: FakeServer, clock: Clock) -> None:
    anthropic_server.script(
        a_wire.error(429, "rate_limit_error", "slow down"),
        a_wire.error(429, "rate_limit_error", "slow down"),
        a_wire.reply_text("ok"),
    )
    pool = RotatingProvider([[anthropic(anthropic_server, "k1"), anthropic(anthropic_server, "k2")]], clock=clock)
    events = await run(pool)
    assert [type(e) for e in events if isinstance(e, Retry | ProviderFallback)] == [ProviderFallback, Retry]
    assert isinstance(events[-1], Done)
    assert [key_of(anthropic_server, i) for i in range(3)] == ["k1", "k2", "k2"]  # k1 rests; k2 is retried
    await pool.aclose()


async def test_a_bad_request_is_not_rotated(anthropic_server: FakeServer, clock: Clock) -> None:
    anthropic_server.script(a_wire.error(400, "invalid_request_error", "messages: field required"))
    pool = RotatingProvider([[anthropic(anthropic_server, "k1"), anthropic(anthropic_server, "k2")]], clock=clock)
    events = await run(pool)
    assert isinstance(events[-1], Error) and "field required" in events[-1].message
    assert len(anthropic_server.requests) == 1
    await pool.aclose()


async def test_network_failures_retry_the_same_candidate_then_fall_back(
    openai_server: FakeServer, clock: Clock
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    down = Candidate(
        AnthropicProvider(
            ProviderSpec(name="anthropic", api="anthropic-messages", base_url=f"http://127.0.0.1:{dead}", api_key="k")
        ),
        "claude-test",
        "k",
    )
    openai_server.script(o_wire.reply_text("from the fallback"))
    pool = RotatingProvider([[down], [openai(openai_server)]], clock=clock, network_retries=1)
    session = InMemorySession()
    agent = Agent(
        providers=ProviderRegistry({"anthropic": pool}),
        config=RunConfig(model="anthropic/claude-test"),
        workspace=Path.cwd(),
    )
    events = [e async for e in agent.run("hi", session=session)]
    fallback = next(e for e in events if isinstance(e, ProviderFallback))
    assert fallback.reason == "network" and fallback.using == "openai/gpt-test (oa-key)"
    assert not pool.cooldowns  # a network problem is not the key's fault
    reply = session.messages()[-1]
    assert isinstance(reply, AssistantMessage) and (reply.provider, reply.model) == ("openai", "gpt-test")
    assert openai_server.requests[0].json["model"] == "gpt-test"
    await pool.aclose()


async def test_a_silent_candidate_falls_back_after_the_first_event_timeout(
    anthropic_server: FakeServer, openai_server: FakeServer, clock: Clock
) -> None:
    anthropic_server.script(Reply(events=a_wire.events([a_wire.text("late")]), stall=3.0))
    openai_server.script(o_wire.reply_text("prompt answer"))
    pool = RotatingProvider(
        [[anthropic(anthropic_server, "k1")], [openai(openai_server)]], clock=clock, first_event_timeout=0.5
    )
    events = await run(pool)
    assert next(e for e in events if isinstance(e, ProviderFallback)).reason == "no_first_event"
    assert isinstance(events[-1], Done) and events[-1].text == "prompt answer"
    await pool.aclose()


async def test_a_count_said_before_any_content_is_not_the_first_event(
    anthropic_server: FakeServer, openai_server: FakeServer, clock: Clock
) -> None:
    """Anthropic counts the input as its message starts: a candidate silent after that still falls back."""
    start, ping = a_wire.events([a_wire.text("never")], input_tokens=500)[:2]
    anthropic_server.script(Reply(events=[start, *[ping] * 20], event_delay=0.2))
    openai_server.script(o_wire.reply_text("prompt answer"))
    pool = RotatingProvider(
        [[anthropic(anthropic_server, "k1")], [openai(openai_server)]], clock=clock, first_event_timeout=0.5
    )
    events = await run(pool)
    assert next(e for e in events if isinstance(e, ProviderFallback)).reason == "no_first_event"
    assert isinstance(events[-1], Done) and events[-1].text == "prompt answer"
    await pool.aclose()


async def test_after_content_a_failure_is_not_rotated(
    anthropic_server: FakeServer, openai_server: FakeServer, clock: Clock
) -> None:
    anthropic_server.script(Reply(events=a_wire.events([a_wire.text("partial answer")]), reset_after=4))
    pool = RotatingProvider([[anthropic(anthropic_server, "k1")], [openai(openai_server)]], clock=clock)
    events = await run(pool)
    assert any(isinstance(e, TextDelta) for e in events)
    assert isinstance(events[-1], Error) and "cut off" in events[-1].message
    assert openai_server.requests == []  # the fallback was never asked: the answer had started
    await pool.aclose()


async def test_an_exhausted_chain_says_what_was_tried(anthropic_server: FakeServer, clock: Clock) -> None:
    anthropic_server.script(
        a_wire.error(401, "authentication_error", "bad one"), a_wire.error(401, "authentication_error", "bad two")
    )
    pool = RotatingProvider([[anthropic(anthropic_server, "k1"), anthropic(anthropic_server, "k2")]], clock=clock)
    events = await run(pool)
    error = events[-1]
    assert isinstance(error, Error) and error.kind == "auth"
    assert "anthropic/claude-test (k1): auth: bad one (HTTP 401)" in error.message
    assert "anthropic/claude-test (k2): auth: bad two (HTTP 401)" in error.message
    again = await run(pool)  # both keys cooling down: no request at all, and a clear reason
    assert isinstance(again[-1], Error) and "cooling down" in again[-1].message
    assert len(anthropic_server.requests) == 2
    pool.clear_cooldown("k2")
    anthropic_server.script(a_wire.reply_text("k2 works again"))
    assert (await run(pool))[-1].text == "k2 works again"  # type: ignore[union-attr]
    await pool.aclose()

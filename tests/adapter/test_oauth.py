"""OAuth refresh against a local fake token endpoint: margin, single flight, revocation, end to end."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from orkas.adapter.connectors.oauth import OAuthCredential, Tokens
from orkas.adapter.settings.vault import FileKey, Vault
from orkas.core.errors import ProviderError
from orkas.engine.providers.anthropic import AnthropicProvider
from orkas.engine.providers.base import ProviderSpec
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.session import InMemorySession
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer, Recorded, Reply, json_reply


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(tmp_path / "vault.bin", FileKey(tmp_path / "vault.key"))


@pytest.fixture
def token_server() -> FakeServer:
    server = FakeServer("/oauth/token").start()
    yield server  # type: ignore[misc]
    server.stop()


def grant(request: Recorded) -> Reply:
    form = dict(pair.split("=", 1) for pair in request.body.decode().split("&"))
    if form["refresh_token"] == "revoked":
        return json_reply(400, {"error": "invalid_grant"})
    return json_reply(
        200, {"access_token": f"access-{form['refresh_token']}-new", "refresh_token": "refresh-2", "expires_in": 3600}
    )


def credential(
    vault: Vault, server: FakeServer, clock: Clock, refresh: str = "refresh-1", ttl: float = 3600
) -> OAuthCredential:
    oauth = OAuthCredential("claude-max", vault, token_url=server.url + "/oauth/token", client_id="orkas", clock=clock)
    oauth.save(Tokens("access-old", refresh, clock() + ttl))
    return oauth


async def test_a_token_is_refreshed_within_five_minutes_of_expiry(vault: Vault, token_server: FakeServer) -> None:
    token_server.responder = grant
    clock = Clock()
    oauth = credential(vault, token_server, clock, ttl=600)
    assert await oauth.token() == "access-old" and token_server.requests == []
    clock.now += 301  # now 299 s before expiry: inside the margin
    assert await oauth.token() == "access-refresh-1-new"
    saved = json.loads(vault.get("claude-max") or "")
    assert saved["refresh_token"] == "refresh-2" and saved["expires_at"] == clock.now + 3600


async def test_concurrent_runs_cause_one_refresh(vault: Vault, token_server: FakeServer) -> None:
    token_server.responder = grant
    oauth = credential(vault, token_server, Clock(), ttl=10)
    tokens = await asyncio.gather(*(oauth.token() for _ in range(8)))
    assert set(tokens) == {"access-refresh-1-new"} and len(token_server.requests) == 1 and oauth.refreshes == 1


async def test_a_revoked_refresh_token_asks_to_sign_in_again(vault: Vault, token_server: FakeServer) -> None:
    token_server.responder = grant
    oauth = credential(vault, token_server, Clock(), refresh="revoked", ttl=0)
    with pytest.raises(ProviderError, match="sign in again") as info:
        await oauth.token()
    assert info.value.kind == "auth" and info.value.status == 400
    assert json.loads(vault.get("claude-max") or "")["refresh_token"] == "revoked"  # nothing overwritten


async def test_requests_carry_the_fresh_token(
    vault: Vault, token_server: FakeServer, anthropic_server: FakeServer
) -> None:
    token_server.responder = grant
    oauth = credential(vault, token_server, Clock(), ttl=60)
    anthropic_server.script(a_wire.reply_text("signed in"))
    provider = AnthropicProvider(
        ProviderSpec(name="anthropic", api="anthropic-messages", base_url=anthropic_server.url, token=oauth.token)
    )
    agent = Agent(
        providers=ProviderRegistry({"anthropic": provider}),
        config=RunConfig(model="anthropic/claude-x"),
        workspace=Path.cwd(),
    )
    result = await agent.run_to_end("hi", session=InMemorySession())
    await provider.aclose()
    assert result.text == "signed in"
    assert anthropic_server.requests[0].headers["authorization"] == "Bearer access-refresh-1-new"

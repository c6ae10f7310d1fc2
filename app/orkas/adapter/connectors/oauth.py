"""OAuth credentials: access tokens refreshed ahead of expiry, once, and kept in the vault.

`OAuthCredential.token()` returns a valid access token. Within five minutes of expiry it refreshes
first (refresh-token grant); concurrent callers share one refresh (single flight); the new tokens
are saved to the vault before anyone uses them. A refresh token the server no longer accepts is a
clear "sign in again" error.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import httpx

from orkas.adapter.settings.vault import Vault
from orkas.core.errors import ProviderError

MARGIN = 300.0  # seconds before expiry when a token is refreshed


@dataclass(frozen=True, slots=True)
class Tokens:
    access_token: str
    refresh_token: str
    expires_at: float  # epoch seconds


class OAuthCredential:
    def __init__(
        self,
        name: str,
        vault: Vault,
        *,
        token_url: str,
        client_id: str,
        clock: Callable[[], float] = time.time,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = name
        self.vault = vault
        self.token_url = token_url
        self.client_id = client_id
        self.clock = clock
        self.transport = transport
        self._lock = asyncio.Lock()
        self.refreshes = 0

    def save(self, tokens: Tokens) -> None:
        self.vault.set(self.name, json.dumps(asdict(tokens)))

    def load(self) -> Tokens:
        raw = self.vault.get(self.name)
        if raw is None:
            raise ProviderError(f"no sign-in is saved for {self.name!r}; sign in again", kind="auth")
        data = json.loads(raw)
        return Tokens(str(data["access_token"]), str(data["refresh_token"]), float(data["expires_at"]))

    async def token(self) -> str:
        tokens = self.load()
        if tokens.expires_at - MARGIN > self.clock():
            return tokens.access_token
        async with self._lock:
            tokens = self.load()  # another caller may have refreshed while we waited
            if tokens.expires_at - MARGIN > self.clock():
                return tokens.access_token
            fresh = await self._refresh(tokens)
            self.save(fresh)
            return fresh.access_token

    async def _refresh(self, tokens: Tokens) -> Tokens:
        self.refreshes += 1
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "client_id": self.client_id}
        try:
            async with httpx.AsyncClient(timeout=30.0, transport=self.transport) as client:
                response = await client.post(self.token_url, data=form)
        except httpx.HTTPError as e:
            raise ProviderError(
                f"could not refresh the sign-in for {self.name!r} ({type(e).__name__})", kind="network"
            ) from e
        if response.status_code in (400, 401, 403):
            raise ProviderError(
                f"the sign-in for {self.name!r} was revoked or has expired: sign in again",
                kind="auth",
                status=response.status_code,
            )
        if response.status_code >= 400:
            raise ProviderError(
                f"the sign-in server answered HTTP {response.status_code}", kind="server", status=response.status_code
            )
        data = response.json()
        return Tokens(
            access_token=str(data["access_token"]),
            refresh_token=str(data.get("refresh_token") or tokens.refresh_token),
            expires_at=self.clock() + float(data.get("expires_in", 3600)),
        )

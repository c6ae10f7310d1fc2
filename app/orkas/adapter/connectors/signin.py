"""Signing in to a hosted MCP server with OAuth 2.1, as the MCP authorization spec describes, through the official
SDK's client (`mcp.client.auth.OAuthClientProvider`): protected-resource metadata, authorization-server discovery,
dynamic client registration, PKCE, the refresh grant.

    sign_in(connector, vault, show)   the person's sign-in: `show` gets the provider's page to open (the window's
                                      system browser, or the CLI prints it); the browser comes back to a loopback
                                      port opened for this attempt only, on 127.0.0.1; the tokens and the client
                                      registration go into the vault, nowhere else
    provider_for(connector, vault)    what every later connection authenticates with: the saved tokens, refreshed
                                      ahead of their expiry; when they are gone or refused it raises
                                      `SignInNeeded` ("sign in again") instead of opening a browser mid-run
    sign_out(connector, vault)        revokes the tokens at the server when it offers revocation, forgets them

Vault keys: `connector:<id>:oauth:tokens` (the tokens, their absolute expiry, the revocation endpoint) and
`connector:<id>:oauth:client` (the registration).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from orkas.adapter.connectors.config import check_url
from orkas.adapter.connectors.loopback import CALLBACK_PATH, Loopback
from orkas.adapter.settings.vault import Vault
from orkas.core.errors import ConfigError
from orkas.core.redact import remember_secret
from orkas.engine.tools.connectors import ConnectorError, SignInNeeded

if TYPE_CHECKING:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

    from orkas.adapter.connectors.config import Connector


class _SaidAlready(logging.Filter):
    """The SDK logs every failed sign-in flow with its traceback; a failure of ours (no sign-in in time, "sign in
    again" mid-run) is said to the person in words already — not as a traceback on their terminal."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and _ours(record.exc_info[1]))


def _ours(error: BaseException | None, depth: int = 0) -> bool:
    """A ConnectorError of ours, wherever an exception group or a chain of causes carries it."""
    if error is None or depth > 20:
        return False
    if isinstance(error, ConnectorError):
        return True
    if isinstance(error, BaseExceptionGroup):
        return any(_ours(inner, depth + 1) for inner in error.exceptions)
    return _ours(error.__cause__ or error.__context__, depth + 1)


logging.getLogger("mcp.client.auth.oauth2").addFilter(_SaidAlready())

SIGNED_OUT = "{name}: signed out — sign in to use it again"
REFRESH_AHEAD = 120.0  # seconds before its expiry an access token is refreshed: never sent stale mid-run
SIGN_IN_TIMEOUT = 300.0  # seconds the person has to finish on the provider's page


def tokens_key(ident: str) -> str:
    return f"connector:{ident}:oauth:tokens"


def client_key(ident: str) -> str:
    return f"connector:{ident}:oauth:client"


def signed_in(connector: Connector, vault: Vault | None) -> bool:
    return vault is not None and vault.get(tokens_key(connector.id)) is not None


def needs_sign_in(connector: Connector, again: bool) -> SignInNeeded:
    how = f"`orkas mcp login {connector.name}`, or Settings → Connectors → Sign in"
    if again:
        return SignInNeeded(f"{connector.name}: the sign-in has expired or was revoked — sign in again ({how})")
    return SignInNeeded(f"{connector.name} needs you to sign in first ({how})")


class VaultTokens:
    """The SDK's `TokenStorage`, kept in the vault. The expiry is stored as a moment, not a duration, so a token
    saved yesterday is known to be stale today."""

    def __init__(self, vault: Vault, ident: str, clock: Callable[[], float] = time.time) -> None:
        self.vault = vault
        self.ident = ident
        self.clock = clock
        self.revocation_endpoint: str | None = None

    def _saved(self) -> dict[str, Any] | None:
        raw = self.vault.get(tokens_key(self.ident))
        if raw is None:
            return None
        try:
            data = json.loads(raw)
        except ValueError:
            return None
        return data if isinstance(data, dict) and data.get("access_token") else None

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        data = await asyncio.to_thread(self._saved)
        if data is None:
            return None
        _remember(data.get("access_token"), data.get("refresh_token"))
        expires_at = data.get("expires_at")
        left = None if expires_at is None else max(0, int(float(expires_at) - self.clock()))
        return OAuthToken(
            access_token=data["access_token"],
            expires_in=left,
            scope=data.get("scope"),
            refresh_token=data.get("refresh_token"),
        )

    async def set_tokens(self, tokens: OAuthToken) -> None:
        _remember(tokens.access_token, tokens.refresh_token)
        previous = await asyncio.to_thread(self._saved) or {}
        data = {
            "access_token": tokens.access_token,
            "refresh_token": tokens.refresh_token,
            "scope": tokens.scope,
            "expires_at": None if tokens.expires_in is None else self.clock() + int(tokens.expires_in),
            "revocation_endpoint": self.revocation_endpoint or previous.get("revocation_endpoint"),
        }
        await asyncio.to_thread(self.vault.set, tokens_key(self.ident), json.dumps(data))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        raw = await asyncio.to_thread(self.vault.get, client_key(self.ident))
        if raw is None:
            return None
        try:
            client = OAuthClientInformationFull.model_validate_json(raw)
        except ValueError:
            return None
        _remember(client.client_secret)
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        _remember(client_info.client_secret)
        await asyncio.to_thread(self.vault.set, client_key(self.ident), client_info.model_dump_json(exclude_none=True))


def _remember(*values: str | None) -> None:
    """Tokens are secrets: redacted from every log line and diagnostics bundle from the moment they are seen."""
    for value in values:
        if value and len(value) >= 8:
            remember_secret(value)


class _Attempt:
    """One sign-in's storage: nothing reaches the vault until the sign-in has worked, so a cancelled attempt
    leaves the previous sign-in (if any) as it was."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        _remember(tokens.access_token, tokens.refresh_token)
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        _remember(client_info.client_secret)
        self.client = client_info


@functools.cache
def _sdk_classes() -> tuple[type, type]:
    """The SDK's OAuth context and provider, refreshing `REFRESH_AHEAD` before expiry, and knowing a saved token's
    expiry from the start (the SDK itself would trust a loaded token until a request was refused, then ask for a
    browser). Made once, on first use: the SDK is imported only when a server signs in."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.auth.oauth2 import OAuthContext

    @dataclass
    class Ahead(OAuthContext):
        def update_token_expiry(self, token: OAuthToken) -> None:
            super().update_token_expiry(token)
            if self.token_expiry_time is not None:
                self.token_expiry_time -= REFRESH_AHEAD

    class Provider(OAuthClientProvider):
        async def _initialize(self) -> None:
            await super()._initialize()
            if self.context.current_tokens is not None:
                self.context.update_token_expiry(self.context.current_tokens)

    return Ahead, Provider


def _provider(connector: Connector, storage: Any, redirect_uri: str, **handlers: Any) -> OAuthClientProvider:
    """The SDK's provider for `connector`, its tokens in `storage`, coming back to `redirect_uri`."""
    from mcp.shared.auth import OAuthClientMetadata

    ahead, provider_class = _sdk_classes()
    metadata = OAuthClientMetadata(
        client_name="Orkas",
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",  # a desktop app keeps no secret: PKCE is its proof
    )
    assert connector.url is not None
    provider: OAuthClientProvider = provider_class(connector.url, metadata, storage, **handlers)
    context = provider.context
    provider.context = ahead(**{f.name: getattr(context, f.name) for f in fields(context)})
    return provider


def provider_for(connector: Connector, vault: Vault) -> OAuthClientProvider:
    """For connections after the sign-in: refreshes as needed, never opens a browser."""
    storage = VaultTokens(vault, connector.id)

    async def refuse(_url: str) -> None:
        raise needs_sign_in(connector, again=signed_in(connector, vault))

    async def never() -> Any:  # pragma: no cover - `refuse` has raised first
        raise needs_sign_in(connector, again=True)

    return _provider(
        connector, storage, f"http://127.0.0.1{CALLBACK_PATH}", redirect_handler=refuse, callback_handler=never
    )


# --- the person's sign-in ---


@dataclass(slots=True)
class SignedIn:
    tools: int
    seconds: float


async def sign_in(
    connector: Connector,
    vault: Vault,
    show: Callable[[str], Awaitable[None] | None],
    *,
    version: str = "0",
    within: float = SIGN_IN_TIMEOUT,
) -> SignedIn:
    """The person signs in: `show` receives the provider's page to open; returns once a session works (its
    tools listed), with the tokens in the vault. Raises `ConnectorError` saying why it did not."""
    import mcp
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.auth import AuthorizationCodeResult

    assert connector.url is not None
    started = time.monotonic()
    attempt = _Attempt()
    async with Loopback(connector.name) as loopback:

        async def redirect(url: str) -> None:
            try:  # a web page, https (or http on this machine): never javascript:, file: or another scheme
                check_url(url)
            except ConfigError:
                raise ConnectorError(
                    f"{connector.name}'s sign-in page is not a web address Orkas will open: {url[:200]!r}"
                ) from None
            states = parse_qs(urlsplit(url).query).get("state", [])
            if len(states) != 1:  # the SDK's own state, once: an address that brings one of its own is not trusted
                raise ConnectorError(f"{connector.name}'s sign-in page address carries a state of its own: refused")
            loopback.expected_state = states[0]
            shown = show(url)
            if shown is not None:
                await shown

        async def callback() -> AuthorizationCodeResult:
            try:
                code, iss = await asyncio.wait_for(asyncio.shield(loopback.code), within)
            except TimeoutError:
                raise ConnectorError(f"no sign-in within {within:.0f} s: try again") from None
            return AuthorizationCodeResult(code=code, state=loopback.expected_state, iss=iss)

        provider = _provider(
            connector, attempt, loopback.redirect_uri, redirect_handler=redirect, callback_handler=callback
        )
        try:
            async with create_mcp_http_client(auth=provider) as http:
                client = mcp.Client(
                    streamable_http_client(connector.url, http_client=http),
                    client_info=mcp.Implementation(name="orkas", version=version),
                )
                async with client:
                    listed = await client.list_tools()
        except BaseException as e:
            said = _why(e)
            if not loopback.outcome.done():
                loopback.outcome.set_result(f"Orkas could not finish signing in to {connector.name}: {said}")
            if isinstance(e, Exception):
                raise ConnectorError(f"{connector.name}: the sign-in did not finish ({said})") from None
            raise
        if attempt.tokens is None or attempt.client is None:  # it let us in without a sign-in: nothing to keep
            raise ConnectorError(f"{connector.name} did not ask for a sign-in: add it without --oauth")
        storage = VaultTokens(vault, connector.id)
        replaced = await asyncio.to_thread(storage._saved), await storage.get_client_info()
        metadata = provider.context.oauth_metadata
        if metadata is not None and metadata.revocation_endpoint is not None:
            storage.revocation_endpoint = str(metadata.revocation_endpoint)
        await storage.set_client_info(attempt.client)
        await storage.set_tokens(attempt.tokens)
        loopback.outcome.set_result(f"Signed in to {connector.name}. You can close this tab and go back to Orkas.")
    await _revoke_saved(*replaced)  # the sign-in it replaces is revoked too: no older tokens stay valid there
    return SignedIn(tools=len(listed.tools), seconds=time.monotonic() - started)


def _why(error: BaseException) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, ConnectorError):
        return str(error)
    text = str(error).strip().splitlines()[0][:300] if str(error).strip() else type(error).__name__
    return text


async def _revoke(http: Any, endpoint: str, client: OAuthClientInformationFull, token: str, hint: str) -> None:
    """RFC 7009, authenticated as the token endpoint was. The SDK's own server reads a public client's form
    only with a `client_secret` field in it, even empty: refused without one, it is asked once more with it."""
    form = {"token": token, "token_type_hint": hint, "client_id": client.client_id or ""}
    headers = {}
    if client.client_secret and client.token_endpoint_auth_method == "client_secret_basic":
        import base64
        from urllib.parse import quote

        pair = f"{quote(client.client_id or '', safe='')}:{quote(client.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif client.client_secret:
        form["client_secret"] = client.client_secret
    answer = await http.post(endpoint, data=form, headers=headers)
    if answer.status_code == 400 and "client_secret" not in form and not headers:
        answer = await http.post(endpoint, data={**form, "client_secret": ""})
    answer.raise_for_status()


def _said(error: Exception) -> str:
    import httpx

    if isinstance(error, httpx.HTTPStatusError):
        return f"HTTP {error.response.status_code}"
    return type(error).__name__


async def _revoke_saved(saved: dict[str, Any] | None, client: OAuthClientInformationFull | None) -> str:
    """Ask the server to revoke a saved sign-in's tokens, when it said how; what happened, said ("" for nothing)."""
    import httpx

    endpoint = (saved or {}).get("revocation_endpoint")
    if not saved or not endpoint or client is None:
        return ""
    try:
        async with httpx.AsyncClient(timeout=10.0) as http:
            for hint in ("refresh_token", "access_token"):
                if token := saved.get(hint):
                    await _revoke(http, endpoint, client, token, hint)
    except httpx.HTTPError as e:
        return f"the server could not be told ({_said(e)}); it forgets it when it expires"
    return "the server revoked it"


async def sign_out(connector: Connector, vault: Vault) -> str:
    """Forget the sign-in; first ask the server to revoke it, when it said how. Returns what happened, said."""
    storage = VaultTokens(vault, connector.id)
    saved = await asyncio.to_thread(storage._saved)
    told = await _revoke_saved(saved, await storage.get_client_info())
    await asyncio.to_thread(vault.delete, tokens_key(connector.id))
    await asyncio.to_thread(vault.delete, client_key(connector.id))
    if not saved:
        return f"{connector.name}: not signed in"
    return f"signed out of {connector.name}" + (f" ({told})" if told else "")

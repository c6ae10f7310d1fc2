"""The provider contract: one streaming method, everything else derived.

A provider adapter speaks one wire API (Anthropic Messages, OpenAI chat completions). Vendors are
data (`ProviderSpec`: base URL, key, headers, capabilities) pointing at an adapter. Adapters raise
`ProviderError` for every failure they can classify; the run loop owns retries.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import unquote, urlsplit, urlunsplit

from orkas.core.errors import ProviderError
from orkas.core.redact import remember_secret
from orkas.engine.messages import AssistantMessage, LLMMessage, StopReason, Usage

Reasoning = Literal["off", "low", "medium", "high"]
REASONING: tuple[Reasoning, ...] = ("off", "low", "medium", "high")

INVALID_INPUT_KEY = "__orkas_invalid_json__"
"""A tool call whose streamed input was not valid JSON keeps the raw text under this key, so the
call stays in the history (pairing) and the run loop answers it with an error result."""
WireApi = Literal["anthropic-messages", "openai-chat"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    images: bool = True
    images_in_tool_results: bool = True
    reasoning: bool = False
    prompt_cache: bool = False
    local: bool = False  # served on this machine: no per-token cost


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDefinition:
    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderRequest:
    model: str
    messages: Sequence[LLMMessage]
    system: str = ""
    tools: Sequence[ToolDefinition] = ()
    tool_choice: Literal["auto", "none"] = "auto"
    max_tokens: int = 8192
    temperature: float | None = None
    reasoning: Reasoning = "off"
    session_id: str | None = None


# Provider stream events: what an adapter yields while a response streams in.


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDeltaChunk:
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingDeltaChunk:
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallChunk:
    """A tool call began streaming (its input arrives later, assembled by the adapter)."""

    id: str
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageChunk:
    """What the provider has counted so far, before the end (Anthropic counts the input as the message starts). Not
    content: a call stopped or cut after it has spent at least this; `MessageEnd.usage` is the final count."""

    usage: Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageEnd:
    """The complete response. Always the last event of a successful stream."""

    message: AssistantMessage
    stop_reason: StopReason
    usage: Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class FallbackChunk:
    """A rotating provider moved to another candidate before any content (reason: auth, billing,
    quota, network, no_first_event). Not content: it never counts as the stream having started."""

    reason: str
    failed: str  # "provider/model (credential)" that failed
    using: str  # what is tried now
    message: str


StreamChunk = TextDeltaChunk | ThinkingDeltaChunk | ToolCallChunk | FallbackChunk | UsageChunk | MessageEnd


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSpec:
    """One configured vendor: which wire API, where, with which key and extras."""

    name: str
    api: WireApi
    base_url: str | None = None
    api_key: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    capabilities: Capabilities = field(default_factory=Capabilities)
    connect_timeout: float = 10.0
    read_timeout: float = 300.0  # the longest silence tolerated between two stream chunks
    max_tokens_param: str = "max_tokens"  # OpenAI's own API wants "max_completion_tokens"
    # An OAuth sign-in instead of a key: called before each request for a fresh bearer token.
    token: Callable[[], Awaitable[str]] | None = None


def url_credentials(url: str | None) -> tuple[str | None, dict[str, str]]:
    """A base URL with a user and password in it (`https://user:pw@gateway/v1`): the URL without them, and the
    header that carries them to the gateway (`Proxy-Authorization: Basic …`). The API key still goes as the
    provider expects it: the gateway's password never replaces it, and never appears where the URL is shown."""
    if not url or "@" not in url:
        return url, {}
    parts = urlsplit(url)
    if parts.username is None:
        return url, {}
    user, password = unquote(parts.username), unquote(parts.password or "")
    remember_secret(password)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    netloc = host + (f":{parts.port}" if parts.port else "")
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return urlunsplit(parts._replace(netloc=netloc)), {"Proxy-Authorization": f"Basic {token}"}


def without_credentials(url: str | None) -> str | None:
    """The URL as it may be shown: never its user and password."""
    return url_credentials(url)[0]


class Provider(Protocol):
    """A model provider. `stream` must end with `MessageEnd` or raise `ProviderError`."""

    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def stream(self, request: ProviderRequest) -> AsyncIterator[StreamChunk]: ...

    async def validate_auth(self) -> None:
        """Raise `ProviderError(kind="auth")` when the credentials are rejected."""
        ...

    async def aclose(self) -> None: ...


async def complete(provider: Provider, request: ProviderRequest) -> MessageEnd:
    """The non-streaming call: drain `stream` and return its end."""
    end: MessageEnd | None = None
    async for chunk in provider.stream(request):
        if isinstance(chunk, MessageEnd):
            end = chunk
    if end is None:
        raise ProviderError("the stream ended without a complete message", kind="stream")
    return end


def parse_tool_input(raw: str) -> dict[str, Any]:
    """Streamed tool input → dict; malformed or non-object JSON is kept under INVALID_INPUT_KEY."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {INVALID_INPUT_KEY: raw}
    return value if isinstance(value, dict) else {INVALID_INPUT_KEY: raw}

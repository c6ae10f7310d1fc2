"""The one error tree of Orkas.

    OrkasError
    ├── ConfigError          misconfiguration found at construction or start (fail fast)
    │   ├── NotFound         the thing asked for does not exist (a conversation, a question)
    │   └── NoProvider       no model provider is configured: nothing can answer yet
    ├── ProviderError        a model provider call failed (carries kind, status, retry hints)
    ├── ToolInputError       a tool was called with input its schema rejects
    └── PairingError         a history change would break tool_use/tool_result pairing

Run-time failures inside a started run travel as events, not exceptions (DESIGN invariant 3);
these classes are what the code raises between layers before that translation.
"""

from __future__ import annotations

from typing import Literal

ProviderErrorKind = Literal[
    "auth",  # 401/403: the key is wrong or lacks permission
    "billing",  # 402 / insufficient balance
    "rate_limit",  # 429
    "overloaded",  # 529 / overloaded_error
    "server",  # 5xx
    "timeout",  # 408, read/connect timeout, stall
    "network",  # connection refused/reset, DNS
    "context_overflow",  # the prompt does not fit the model's window
    "bad_request",  # 400/413/422 and other client-side mistakes
    "not_found",  # 404: unknown model or endpoint
    "content_policy",  # refused by the provider's safety system
    "conflict",  # 409
    "stream",  # malformed stream or SSE error event without a clearer kind
    "exhausted",  # every candidate of a provider pool failed
]


class OrkasError(Exception):
    """Root of every error Orkas raises on purpose."""


class ConfigError(OrkasError):
    """Configuration that cannot work: unknown provider, missing key, bad option."""


class NotFound(ConfigError):
    """What was asked for does not exist: the server answers 404 to this, and only to this."""


class ConversationBusy(ConfigError):
    """A conversation is running in another Orkas process (the window, or `orkas run` in a terminal)."""


class NoProvider(ConfigError):
    """No model provider is configured: a message cannot be sent until the person adds one."""


class ProviderError(OrkasError):
    """A provider call failed. `kind` drives retry and the user-facing error kind."""

    def __init__(
        self,
        message: str,
        *,
        kind: ProviderErrorKind,
        status: int | None = None,
        retry_after: float | None = None,
        provider: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind: ProviderErrorKind = kind
        self.status = status
        self.retry_after = retry_after
        self.provider = provider

    def __repr__(self) -> str:
        return f"ProviderError({self.message!r}, kind={self.kind!r}, status={self.status!r})"


class ToolInputError(OrkasError):
    """Tool input that does not match the tool's schema."""


class PairingError(OrkasError):
    """A history change would leave a tool call without its result (or a result without its call)."""

"""The one retry policy: which provider failures are worth another attempt, and how long to wait.

Provider SDKs' own retries are turned off so that waits show up as `retry` events a person can see
and an abort can interrupt.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from orkas.core.errors import ProviderError
from orkas.engine.events import ErrorKind

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
# "stream": a malformed stream or an unexplained SSE error event; retried like a dropped connection.
RETRYABLE_KINDS = frozenset({"rate_limit", "overloaded", "server", "timeout", "network", "conflict", "stream"})


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay: float = 1.0  # seconds; doubles each attempt
    max_delay: float = 30.0  # cap on our own backoff
    max_retry_after: float = 120.0  # cap on what a server may ask us to wait
    jitter: float = 0.2  # up to +20% of the base wait

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_delay < 0 or self.max_delay < 0:
            raise ValueError(f"retry settings must not be negative: {self!r}")

    def wait(self, attempt: int, error: ProviderError) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        if error.retry_after is not None:
            return float(min(max(error.retry_after, 0.0), self.max_retry_after))
        base = min(self.base_delay * 2 ** (attempt - 1), self.max_delay)
        return float(min(base + base * self.jitter * random.random(), self.max_delay))


def is_retryable(error: ProviderError) -> bool:
    if error.kind in {"auth", "billing", "bad_request", "not_found", "content_policy", "context_overflow"}:
        return False
    if error.status is not None and error.status != 200:
        return error.status in RETRYABLE_STATUS or error.kind in RETRYABLE_KINDS
    return error.kind in RETRYABLE_KINDS


def error_kind(error: ProviderError) -> ErrorKind:
    """The user-facing kind of a provider failure."""
    match error.kind:
        case "auth":
            return "auth"
        case "rate_limit":
            return "rate_limit"
        case "context_overflow":
            return "context_overflow"
        case "timeout":
            return "timeout"
        case _:
            return "provider"


def describe(error: ProviderError) -> str:
    """One sentence for a person: what failed and what to do about it."""
    who = f"{error.provider}: " if error.provider else ""
    status = f" (HTTP {error.status})" if error.status and error.status != 200 else ""
    hint = {
        "auth": " Check the API key for this provider.",
        "billing": " The account has no credit or its plan does not allow this.",
        "rate_limit": " The provider is limiting requests; try again shortly.",
        "not_found": " Check the model name.",
        "network": " Check the network connection and the provider's base URL.",
        "timeout": " The provider did not answer in time.",
        "context_overflow": " The conversation is too long for this model's context window.",
    }.get(error.kind, "")
    return f"{who}{error.message}{status}.{hint}".replace("..", ".")

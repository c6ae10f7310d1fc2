"""Turning what a provider said into a classified `ProviderError`, shared by every wire adapter."""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping

from orkas.core.errors import ProviderError, ProviderErrorKind

_OVERFLOW = re.compile(
    r"prompt is too long|context[_ ]length|context window|maximum context|too many tokens|"
    r"input is too long|exceeds the (model's )?(maximum|context)",
    re.IGNORECASE,
)
_BALANCE = re.compile(r"insufficient[_ ](balance|quota|funds)|credit balance|余额不足|billing", re.IGNORECASE)
_POLICY = re.compile(r"content[_ ]policy|content[_ ]filter|safety system|flagged", re.IGNORECASE)

_TYPE_KINDS: Mapping[str, ProviderErrorKind] = {
    "overloaded_error": "overloaded",
    "api_error": "server",
    "rate_limit_error": "rate_limit",
    "authentication_error": "auth",
    "permission_error": "auth",
    "invalid_request_error": "bad_request",
    "not_found_error": "not_found",
    "request_too_large": "bad_request",
    "billing_error": "billing",
    "timeout_error": "timeout",
    "server_error": "server",
    "insufficient_quota": "billing",
    "context_length_exceeded": "context_overflow",
    "rate_limit_exceeded": "rate_limit",
}


def classify(status: int | None, message: str, error_type: str | None = None) -> ProviderErrorKind:
    """The kind of a failure from its HTTP status, the provider's error type and its wording."""
    if _OVERFLOW.search(message) or error_type == "context_length_exceeded":
        return "context_overflow"
    if status in (402,) or _BALANCE.search(message) or error_type == "insufficient_quota":
        return "billing"
    if _POLICY.search(message):
        return "content_policy"
    if status is not None and status != 200:
        return _status_kind(status)
    if error_type and error_type in _TYPE_KINDS:
        return _TYPE_KINDS[error_type]
    return "stream"


def _status_kind(status: int) -> ProviderErrorKind:
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status == 409:
        return "conflict"
    if status == 429:
        return "rate_limit"
    if status == 529:
        return "overloaded"
    if status >= 500:
        return "server"
    return "bad_request"


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, then `retry-after` (seconds or date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(parsed.timestamp() - time.time(), 0.0)


def provider_error(
    provider: str,
    *,
    status: int | None,
    message: str,
    error_type: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> ProviderError:
    kind = classify(status, message, error_type)
    return ProviderError(
        message.strip() or f"request failed with status {status}",
        kind=kind,
        status=status,
        retry_after=retry_after(headers) if headers is not None else None,
        provider=provider,
    )

"""Backoff, caps and classification of provider failures."""

from __future__ import annotations

import pytest

from orkas.core.errors import ProviderError
from orkas.engine.providers.errors import classify, retry_after
from orkas.engine.retry import RetryPolicy, describe, is_retryable


def err(kind: str = "server", status: int | None = 500, after: float | None = None) -> ProviderError:
    return ProviderError("boom", kind=kind, status=status, retry_after=after)  # type: ignore[arg-type]


def test_backoff_doubles_with_bounded_jitter_and_caps_at_30s() -> None:
    policy = RetryPolicy()
    for attempt, base in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0)]:
        waits = [policy.wait(attempt, err()) for _ in range(200)]
        assert min(waits) >= base and max(waits) <= base * 1.2
        assert max(waits) > min(waits)  # there is jitter
    assert all(policy.wait(12, err()) <= 30.0 for _ in range(50))


def test_retry_after_is_honoured_up_to_120s() -> None:
    policy = RetryPolicy()
    assert policy.wait(1, err(after=45.0)) == 45.0
    assert policy.wait(1, err(after=600.0)) == 120.0
    assert policy.wait(1, err(after=-3.0)) == 0.0


def test_negative_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        RetryPolicy(max_retries=-1)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_retryable_statuses(status: int) -> None:
    assert is_retryable(ProviderError("x", kind=classify(status, "x"), status=status))


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_non_retryable_statuses(status: int) -> None:
    assert not is_retryable(ProviderError("x", kind=classify(status, "x"), status=status))


@pytest.mark.parametrize(
    ("status", "message", "error_type", "kind"),
    [
        (
            400,
            "prompt is too long: 300000 tokens > 200000 maximum",
            "invalid_request_error",
            "context_overflow",
        ),
        (400, "This model's maximum context length is 128000 tokens", None, "context_overflow"),
        (402, "Insufficient Balance", None, "billing"),
        (429, "You exceeded your current quota", "insufficient_quota", "billing"),
        (400, "Output blocked by content filtering policy", None, "content_policy"),
        (None, "Overloaded", "overloaded_error", "overloaded"),
        (None, "Internal server error", "api_error", "server"),
        (None, "bad", "invalid_request_error", "bad_request"),
        (None, "mystery", None, "stream"),
        (401, "invalid x-api-key", "authentication_error", "auth"),
    ],
)
def test_classification(status: int | None, message: str, error_type: str | None, kind: str) -> None:
    assert classify(status, message, error_type) == kind


def test_retry_after_header_forms() -> None:
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a date in the past
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_descriptions_say_what_to_do() -> None:
    auth = ProviderError("invalid x-api-key", kind="auth", status=401, provider="anthropic")
    assert describe(auth) == "anthropic: invalid x-api-key (HTTP 401). Check the API key for this provider."
    net = ProviderError("could not reach 127.0.0.1:9", kind="network", provider="openai")
    assert "Check the network connection" in describe(net)

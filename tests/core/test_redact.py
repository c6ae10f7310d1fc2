"""The one redaction every log line, crash report and diagnostics bundle passes through."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orkas.core import redact as redaction
from orkas.core.redact import redact, remember_secret, set_home

# (text with a secret, the secret) — each provider shape, the positional and the named forms.
SECRETS = [
    ("invalid x-api-key: sk-ant-api03-Zx9_kq2LmN0pQr7sTuVw-AAAA", "sk-ant-api03-Zx9_kq2LmN0pQr7sTuVw-AAAA"),
    ("openai said: Incorrect API key provided: sk-proj-a1B2c3D4e5F6g7H8i9J0", "sk-proj-a1B2c3D4e5F6g7H8i9J0"),
    ("openrouter sk-or-v1-0123456789abcdef0123456789abcdef", "sk-or-v1-0123456789abcdef0123456789abcdef"),
    ("deepseek sk-9f8e7d6c5b4a39281706f5e4d3c2b1a0", "sk-9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("google key=AIzaSyA1234567890abcdefghijklmnopqrstu", "AIzaSyA1234567890abcdefghijklmnopqrstu"),
    ("groq gsk_abcdefghijklmnopqrstuvwx12345", "gsk_abcdefghijklmnopqrstuvwx12345"),
    ("xai-AbCdEfGhIjKlMnOpQrStUvWx0987 was refused", "xai-AbCdEfGhIjKlMnOpQrStUvWx0987"),
    ("hugging face hf_abcdefghijklmnopqrstuvwxyz", "hf_abcdefghijklmnopqrstuvwxyz"),
    ("github ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("aws AKIAIOSFODNN7EXAMPLE in env", "AKIAIOSFODNN7EXAMPLE"),
    ("tavily tvly-dev-AbCdEf123456789XyZ", "tvly-dev-AbCdEf123456789XyZ"),
    ("Authorization: Bearer abc.DEF-ghi_123456789", "abc.DEF-ghi_123456789"),
    ("header authorization=Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
    ),
    ("proxy https://bob:hunter2-Secret@proxy.example.com:8080/v1", "hunter2-Secret"),
    ("GET /?token=Zq7-local-launch-token-88 200", "Zq7-local-launch-token-88"),
    ('{"api_key": "plain-looking-value-42", "model": "m"}', "plain-looking-value-42"),
    ("password=correct-horse-battery", "correct-horse-battery"),
    ("pairing code: 481-516-x", "481-516-x"),
    ("device_token=dvc_0a1b2c3d4e5f", "dvc_0a1b2c3d4e5f"),
    ("Cookie: session=abc123; theme=dark", "session=abc123"),
    ("write to alice.smith+work@example.co.uk please", "alice.smith+work@example.co.uk"),
    ("call +351 912 345 678 tomorrow", "912 345 678"),
    ("or (555) 123-4567 at home", "123-4567"),
    ("us 555-867-5309 mobile", "555-867-5309"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNz"),
]

# What must survive: a log that loses its numbers is a log nobody can read.
HARMLESS = [
    "2026-12-01 18:13:15.123 INFO    [serve 4242] orkas.server: GET /api/conversations 200 in 12 ms",
    "provider call anthropic/claude-sonnet-4-5 ok in 812 ms: 1200 in, 340 out tokens, stop end_turn",
    "server ready on port 8123 at 127.0.0.1:8123 after 640 ms",
    "compacted session 3f2a9c1e-1234-5678-9abc-def012345678 by summary: 180000→42000 tokens",
    "tool read_file ok in 3 ms (input 12 chars); orkas 0.1.0; numpy 2.4.6; size 10485760 bytes",
    "max_tokens=4096 input_tokens=500 output_tokens: 20 retry 2 in 1.5 s",
    "conversation c-20261201-181315 message m-7f3a (42 chars, 0 files)",
]


@pytest.fixture(autouse=True)
def home() -> Iterator[None]:
    set_home("/home/alice")
    yield
    set_home(None)


@pytest.mark.parametrize(("text", "secret"), SECRETS, ids=[s[1][:12] for s in SECRETS])
def test_every_secret_shape_is_removed(text: str, secret: str) -> None:
    assert secret not in redact(text)


@pytest.mark.parametrize("text", HARMLESS)
def test_ordinary_log_text_is_kept(text: str) -> None:
    assert redact(text) == text


def test_a_remembered_secret_goes_whatever_its_shape() -> None:
    odd = "zq!7 unusual shape 0042"
    assert odd in redact(f"key {odd} failed")
    remember_secret(odd)
    assert odd not in redact(f"key {odd} failed")
    remember_secret("abc")  # too short to remember: it would blank out ordinary words
    assert redact("abc def") == "abc def"


def test_home_becomes_tilde_but_only_the_whole_folder() -> None:
    assert redact("opened /home/alice/notes/plan.md") == "opened ~/notes/plan.md"
    assert redact("opened /home/alicex/plan.md") == "opened /home/alicex/plan.md"
    assert redact("cwd=/home/alice") == "cwd=~"


def test_already_redacted_text_is_stable() -> None:
    once = redact("Authorization: Bearer abcdef123456 token=xyz987654 https://u:p4ssw0rd@h.example/x?key=k123456")
    assert redact(once) == once
    assert "]]" not in once


def test_known_secrets_are_process_wide_and_thread_safe() -> None:
    import threading

    values = [f"thread-secret-{i:04d}-value" for i in range(200)]
    threads = [threading.Thread(target=remember_secret, args=(v,)) for v in values]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    text = " ".join(values)
    assert not any(v in redact(text) for v in values)
    assert redaction.SECRET in redact(text)

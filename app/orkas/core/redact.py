"""Redaction: what may never reach a log file, a crash report or a diagnostics bundle.

One function, `redact`, used by the logging filter, the crash reporter and the diagnostics writer, so
there is one list to extend. It removes:

- values the app knows to be secret (`remember_secret`: provider keys from the vault, the local API
  token, device tokens, pairing codes), whatever their shape;
- API keys and tokens of the providers' known shapes, Bearer/Basic values and JWTs;
- values after secret-sounding names (`api_key=…`, `"password": "…"`, `Authorization: …`);
- passwords in URLs and token-like query parameters;
- email addresses and phone numbers;
- the home folder, written as `~` (where files live says who the person is).

It errs towards removing too much: a log line missing a harmless number is better than a key in a
bug report.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

SECRET = "[secret]"
EMAIL = "[email]"
PHONE = "[phone]"
MIN_KNOWN = 6  # shorter remembered values would blank out ordinary words

_KEY_SHAPES = re.compile(
    r"""
    \bsk-ant-[A-Za-z0-9_\-]{8,}              # Anthropic
  | \bsk-(?:proj-|or-v1-|svcacct-)?[A-Za-z0-9_\-]{16,}   # OpenAI, OpenRouter, DeepSeek
  | \bAIza[0-9A-Za-z_\-]{30,}                 # Google
  | \b(?:gsk|xai|hf|r8|pplx|tvly|nvapi|fw)[_-][A-Za-z0-9_\-]{16,}   # Groq, xAI, Hugging Face, Replicate, …
  | \bgh[pousr]_[A-Za-z0-9]{20,}              # GitHub tokens
  | \bgithub_pat_[A-Za-z0-9_]{20,}
  | \bAKIA[0-9A-Z]{16}\b                      # AWS access key ids
  | \b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}   # Stripe
  | \bxox[abprs]-[A-Za-z0-9\-]{10,}           # Slack
  | \bBSA[A-Za-z0-9_\-]{20,}                  # Brave Search
  | \beyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]*   # JWT
  | -----BEGIN[A-Z ]*PRIVATE\ KEY-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE\ KEY-----|$)
    """,
    re.VERBOSE,
)
_SCHEMES = re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/\-]{6,}=*", re.IGNORECASE)
_NAMED = re.compile(
    r"""
    (?P<name>
        ["']?
        (?:[A-Za-z0-9]+[_\-.])*
        (?:api[_\-]?key|apikey|token|secret|password|passwd|passphrase|pwd|authorization|cookie|set-cookie
          |access[_\-]?key|private[_\-]?key|client[_\-]?secret|credentials?|pairing[_\-\ ]?code|device[_\-]?token)
        ["']?
        \s*[:=]\s*
    )
    (?!\[secret\]|(?:Bearer|Basic|Token)\s)   # already redacted, or a scheme the line above handled
    (?P<value>"[^"]*"|'[^']*'|[^\s,;&}\]"')]+)
    """,
    re.VERBOSE | re.IGNORECASE,
)
_COOKIE = re.compile(r"\b((?:set-)?cookie\s*:\s*)[^\r\n]+", re.IGNORECASE)  # every pair on the line
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+):[^@\s/]+@")
_QUERY_SECRET = re.compile(
    r"([?&](?:token|key|api_key|apikey|access_token|refresh_token|code|sig|signature|password|secret)=)[^&\s#\"']+",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b")
# With a + or separators only: bare digit runs are sizes, ids and timestamps far more often than phones.
_PHONE = re.compile(
    r"""
    (?<![\w.:/\-+])
    (?:
        \+\d{1,3}[\s.\-]?(?:\(\d{1,4}\)[\s.\-]?)?\d{2,4}(?:[\s.\-]?\d{2,4}){1,3}
      | \(\d{2,4}\)[\s.\-]?\d{3,4}[\s.\-]\d{3,5}
      | \d{3}[.\-\ ]\d{3}[.\-\ ]\d{4}
      | \d{3}\ \d{3}\ \d{3}
    )
    (?![\w.:/\-])
    """,
    re.VERBOSE,
)


class _Known:
    """Values this process knows to be secret, matched as plain text whatever their shape."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def add(self, value: str) -> None:
        value = value.strip()
        if len(value) < MIN_KNOWN:
            return
        with self._lock:
            if value in self._values:
                return
            self._values.add(value)
            longest_first = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(v) for v in longest_first))

    def sub(self, text: str) -> str:
        pattern = self._pattern
        return pattern.sub(SECRET, text) if pattern is not None else text


_known = _Known()
_home: re.Pattern[str] | None = None


def remember_secret(value: str | None) -> None:
    """From now on, `value` is removed wherever it appears (keys, tokens, codes this process handles)."""
    if value:
        _known.add(value)


def set_home(home: Path | str | None) -> None:
    """Paths under `home` are written relative to `~` (set once at start; tests use their own home)."""
    global _home
    text = str(home).rstrip("/\\") if home else ""
    # Only the whole folder name: with home /home/al, /home/alice stays as it is.
    _home = re.compile(re.escape(text) + r"(?=[/\\\s\"':,;)\]]|$)") if len(text) > 1 else None


def redact(text: str) -> str:
    if not text:
        return text
    text = _known.sub(text)
    text = _KEY_SHAPES.sub(SECRET, text)
    text = _SCHEMES.sub(lambda m: f"{m.group(1)} {SECRET}", text)
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{SECRET}@", text)
    text = _QUERY_SECRET.sub(lambda m: f"{m.group(1)}{SECRET}", text)
    text = _COOKIE.sub(lambda m: f"{m.group(1)}{SECRET}", text)
    text = _NAMED.sub(lambda m: f"{m.group('name')}{SECRET}", text)
    text = _EMAIL.sub(EMAIL, text)
    text = _PHONE.sub(PHONE, text)
    if _home is not None:
        text = _home.sub("~", text)
    return text

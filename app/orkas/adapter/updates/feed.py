"""The release feed: a small signed JSON document saying which versions exist and where their files are.

    {"feed": "<the payload, as JSON text>", "signature": "<base64 Ed25519 signature over that text's UTF-8>"}

The payload is signed as the exact text it is, so no re-encoding can change what was signed:

    {"schema": 1, "published": "2026-12-06T03:00:00Z",
     "releases": [{"version": "0.3.0", "notes": "…", "data_format": 2,
                   "artifacts": [{"platform": "linux-x86_64", "kind": "tar.gz", "url": "https://…",
                                  "size": 123456, "sha256": "<hex>"}]}]}

A feed verifies only against a public key shipped in the app (`RELEASE_KEYS`; build/feed.py signs with the
private one, kept out of the repository). A feed published before the last one accepted is refused, so an old
signed feed replayed by whoever sits on the network cannot offer an old, vulnerable version as new; and an offer
not newer than the installed version is never one.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from orkas.adapter.updates.address import RELEASE_KEYS, allowed_url

FEED_LIMIT = 1024 * 1024  # bytes: a feed is a few kilobytes
NOTES_LIMIT = 20_000  # characters of release notes kept per version
KINDS = ("tar.gz", "deb", "dmg", "exe")
_VERSION = re.compile(r"(\d+(?:\.\d+){0,3})(?:(a|b|rc)(\d+))?\Z")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_PLATFORM = re.compile(r"[a-z0-9]+-[a-z0-9_]+\Z")


class UpdateError(Exception):
    """Why a check, a download or an install did not happen; the running version is untouched."""


Version = tuple[tuple[int, ...], int, int]


def parse_version(text: str) -> Version:
    """'1.2.3' < '1.2.4rc1' < '1.2.4': release numbers, then a pre-release (a < b < rc) before its release."""
    found = _VERSION.match(text) if isinstance(text, str) else None
    if found is None:
        raise UpdateError(f"{text!r} is not a version (like 1.2.3 or 1.3.0rc1)")
    numbers = tuple(int(part) for part in found.group(1).split("."))
    numbers += (0,) * (4 - len(numbers))
    stage = {"a": 0, "b": 1, "rc": 2, None: 3}[found.group(2)]
    return numbers, stage, int(found.group(3) or 0)


@dataclass(frozen=True, slots=True)
class Artifact:
    platform: str  # "linux-x86_64", "macos-arm64", "windows-amd64"
    kind: str  # one of KINDS
    url: str
    size: int  # bytes
    sha256: str  # hex, lower case


@dataclass(frozen=True, slots=True)
class Release:
    version: str
    notes: str
    data_format: int  # the data folder format this version writes (adapter/settings/data_format.py)
    artifacts: tuple[Artifact, ...]

    def artifact(self, platform: str, kind: str) -> Artifact | None:
        return next((a for a in self.artifacts if a.platform == platform and a.kind == kind), None)


@dataclass(frozen=True, slots=True)
class Feed:
    published: datetime
    releases: tuple[Release, ...]

    def newest(self, platform: str, kind: str) -> Release | None:
        """The newest release with a file for this platform and kind of install (any release, for a source
        checkout: it is told that one exists, and updates with git)."""
        offered = [r for r in self.releases if kind == "source" or r.artifact(platform, kind) is not None]
        return max(offered, key=lambda r: parse_version(r.version), default=None)


def verify(raw: bytes, keys: Sequence[str] = RELEASE_KEYS) -> Feed:
    """The feed in `raw`, if one of `keys` signed it; UpdateError saying why not."""
    from cryptography.exceptions import InvalidSignature  # here: the app starts without cryptography
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if len(raw) > FEED_LIMIT:
        raise UpdateError(f"the feed is larger than {FEED_LIMIT // 1024} KiB: not a release feed")
    try:
        envelope = json.loads(raw)
        text, signature = envelope["feed"], base64.b64decode(envelope["signature"], validate=True)
        signed = text.encode("utf-8")
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error, UnicodeError, RecursionError):
        raise UpdateError("the feed is not a signed release feed (no feed and signature)") from None
    for key in keys:
        try:
            Ed25519PublicKey.from_public_bytes(base64.b64decode(key)).verify(signature, signed)
            break
        except (InvalidSignature, ValueError, binascii.Error):
            continue
    else:
        raise UpdateError("the feed's signature does not match the release key: it was not published by Orkas")
    try:
        return _payload(json.loads(text))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        raise UpdateError(f"the signed feed is malformed: {e}") from None


def _payload(data: dict) -> Feed:  # type: ignore[type-arg]
    if data["schema"] != 1:
        raise UpdateError(f"the feed is in format {data['schema']!r}; this Orkas reads format 1: update by hand")
    published = datetime.fromisoformat(data["published"])
    if published.tzinfo is None:
        raise ValueError("published has no time zone")
    releases = []
    for entry in data["releases"]:
        parse_version(entry["version"])
        if not isinstance(entry["data_format"], int) or isinstance(entry["data_format"], bool):
            raise ValueError(f"{entry['version']}: data_format is not a number")
        artifacts = tuple(_artifact(a) for a in entry["artifacts"])
        notes = entry.get("notes", "")
        if not isinstance(notes, str):
            raise ValueError(f"{entry['version']}: notes are not text")
        releases.append(Release(entry["version"], notes[:NOTES_LIMIT], entry["data_format"], artifacts))
    return Feed(published.astimezone(UTC), tuple(releases))


def _artifact(a: dict) -> Artifact:  # type: ignore[type-arg]
    size = a["size"]
    if not isinstance(size, int) or isinstance(size, bool) or not 0 < size <= 4 * 1024**3:
        raise ValueError(f"size {size!r} is not a file's size")
    if a["kind"] not in KINDS or not _PLATFORM.match(a["platform"]) or not _SHA256.match(a["sha256"]):
        raise ValueError(f"an artifact of {a['platform']!r} ({a['kind']!r}) is not described right")
    if not allowed_url(a["url"]):
        raise ValueError(f"{a['url']!r} is not an https address")
    return Artifact(a["platform"], a["kind"], a["url"], size, a["sha256"])


def sign(payload: dict, private_key: str) -> bytes:  # type: ignore[type-arg]
    """The signed feed for `payload` (build/feed.py and the tests; the app only verifies)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    text = json.dumps(payload, ensure_ascii=False, indent=1)
    key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(private_key))
    signature = base64.b64encode(key.sign(text.encode("utf-8"))).decode()
    return (json.dumps({"feed": text, "signature": signature}, ensure_ascii=False) + "\n").encode("utf-8")

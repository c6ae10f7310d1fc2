"""The update checker's only traffic: plain GETs of the feed and of a release file.

Nothing identifies the person or the machine: no cookies, no query, no version in the user agent, no
referer — the same request from every Orkas. The standard library's client, not httpx: the check runs in an
app sitting idle, which should not carry the model wire's client for a once-a-day request. Redirects are
followed (release hosts redirect to their storage), each to an allowed address.
"""

from __future__ import annotations

import hashlib
import os
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.error import HTTPError, URLError

from orkas.adapter.updates.address import allowed_url
from orkas.adapter.updates.feed import UpdateError

AGENT = "Orkas-update-check"  # every installation sends exactly this
TIMEOUT = 30.0  # seconds without a byte
CHUNK = 256 * 1024


class _Redirects(urllib.request.HTTPRedirectHandler):
    max_redirections = 5

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        if not allowed_url(newurl):
            raise UpdateError(f"the release host sent Orkas on to {newurl!r}, which is not https")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _open(url: str):  # type: ignore[no-untyped-def]
    if not allowed_url(url):
        raise UpdateError(f"{url!r} is not an https address")
    opener = urllib.request.build_opener(_Redirects())
    opener.addheaders = [("User-Agent", AGENT)]
    try:
        return opener.open(urllib.request.Request(url, headers={"Accept": "*/*"}), timeout=TIMEOUT)
    except HTTPError as e:
        raise UpdateError(f"{url} answered {e.code} {e.reason}") from None
    except (URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise UpdateError(f"cannot reach {url}: {getattr(reason, 'strerror', None) or reason}") from None


def get(url: str, limit: int) -> bytes:
    """The body of `url`, at most `limit` bytes (more is refused, not cut)."""
    with _open(url) as answer:
        try:
            body: bytes = answer.read(limit + 1)
        except OSError as e:
            raise UpdateError(f"reading {url} failed: {e}") from None
    if len(body) > limit:
        raise UpdateError(f"{url} sent more than {limit} bytes")
    return body


def download(
    url: str, target: Path, *, size: int, sha256: str, progress: Callable[[int], None] = lambda done: None
) -> Path:
    """`url` saved as `target`, only if it is exactly `size` bytes hashing to `sha256`; anything else (a cut
    connection, a longer or different file) leaves no file behind and raises UpdateError."""
    partial = target.with_name(target.name + ".part")
    digest = hashlib.sha256()
    done = 0
    try:
        with _open(url) as answer, partial.open("wb") as out:
            while chunk := answer.read(CHUNK):
                done += len(chunk)
                if done > size:
                    raise UpdateError(f"the download is larger than the feed says ({size} bytes): refused")
                digest.update(chunk)
                out.write(chunk)
                progress(done)
            out.flush()
            os.fsync(out.fileno())
        if done != size:
            raise UpdateError(f"the download stopped after {done} of {size} bytes; try again")
        if digest.hexdigest() != sha256:
            raise UpdateError("the downloaded file's SHA-256 is not the one the signed feed gives: refused")
        os.replace(partial, target)
    except OSError as e:
        partial.unlink(missing_ok=True)
        raise UpdateError(f"the download failed: {getattr(e, 'strerror', None) or e}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return target

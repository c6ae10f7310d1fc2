"""Sign a release feed: the small JSON document installed copies of Orkas read to find a newer version.

    ORKAS_FEED_SIGNING_KEY=… python build/feed.py --base-url URL [--notes FILE] [--keep OLD_FEED] FILES… > feed.json
    python build/feed.py --new-key

FILES are what build/build.py made (`orkas-V-linux-ARCH.tar.gz`, `orkas_V_ARCH.deb`, `Orkas-V-macos-ARCH.dmg`,
`Orkas-V-windows-setup.exe`); each is listed with its platform, size and SHA-256 under `--base-url`/its name
(publish feed.json and the files together, e.g. on the release page). `--keep` carries the releases of a
feed already published. The version and data format come from this checkout.

The private key (base64, raw Ed25519) comes from ORKAS_FEED_SIGNING_KEY and nowhere else: never a file in the
repository, never an argument (arguments show in `ps`). `--new-key` prints a new pair: the private one goes into
the release machine's secrets, the public one into app/orkas/adapter/updates/address.py's RELEASE_KEYS.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "app"))

from orkas import __version__  # noqa: E402
from orkas.adapter.settings.data_format import CURRENT  # noqa: E402
from orkas.adapter.updates.feed import sign, verify  # noqa: E402

ARCH = {"amd64": "x86_64", "arm64": "aarch64", "x86_64": "x86_64", "aarch64": "aarch64"}
NAMES = (  # build/build.py's file names → platform, kind
    (re.compile(r"orkas-[^-]+-linux-(\w+)\.tar\.gz\Z"), "linux", "tar.gz"),
    (re.compile(r"orkas_[^_]+_(\w+)\.deb\Z"), "linux", "deb"),
    (re.compile(r"Orkas-[^-]+-macos-(\w+)\.dmg\Z"), "macos", "dmg"),
    (re.compile(r"Orkas-[^-]+-windows-setup\.exe\Z"), "windows", "exe"),
)


def describe(path: Path, base_url: str) -> dict[str, object]:
    for pattern, system, kind in NAMES:
        found = pattern.match(path.name)
        if found:
            machine = ARCH.get(found.group(1), found.group(1)) if found.groups() else "amd64"
            digest = hashlib.sha256()
            with path.open("rb") as file:
                while chunk := file.read(1 << 20):
                    digest.update(chunk)
            return {
                "platform": f"{system}-{machine}",
                "kind": kind,
                "url": f"{base_url.rstrip('/')}/{path.name}",
                "size": path.stat().st_size,
                "sha256": digest.hexdigest(),
            }
    raise SystemExit(f"feed: {path.name} is not a file build/build.py makes")


def new_key() -> None:
    from cryptography.hazmat.primitives import serialization as s
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(s.Encoding.Raw, s.PrivateFormat.Raw, s.NoEncryption())
    public = key.public_key().public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)
    print(f"ORKAS_FEED_SIGNING_KEY={base64.b64encode(private).decode()}  (keep secret)")
    print(f"public key for RELEASE_KEYS: {base64.b64encode(public).decode()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--base-url", help="where the files will be published (https)")
    parser.add_argument("--notes", type=Path, help="the release notes (Markdown)")
    parser.add_argument("--keep", type=Path, help="a published feed whose releases to keep listing")
    parser.add_argument("--new-key", action="store_true", help="print a new signing key pair and stop")
    args = parser.parse_args(argv)
    if args.new_key:
        new_key()
        return 0
    private = os.environ.get("ORKAS_FEED_SIGNING_KEY")
    if not private:
        parser.error("ORKAS_FEED_SIGNING_KEY is not set (the release key; `--new-key` makes one)")
    if not args.files or not args.base_url:
        parser.error("give the files to list and --base-url")
    releases: list[dict[str, object]] = []
    if args.keep:
        from cryptography.hazmat.primitives import serialization as s
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(private))
        public = base64.b64encode(key.public_key().public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)).decode()
        verify(args.keep.read_bytes(), [public])  # only a feed this key signed is carried on
        old = json.loads(json.loads(args.keep.read_text())["feed"])
        releases = [r for r in old["releases"] if r["version"] != __version__]
    notes = args.notes.read_text(encoding="utf-8") if args.notes else ""
    artifacts = [describe(path, args.base_url) for path in args.files]
    releases.append({"version": __version__, "notes": notes, "data_format": CURRENT, "artifacts": artifacts})
    payload = {"schema": 1, "published": datetime.now(UTC).isoformat(timespec="seconds"), "releases": releases}
    sys.stdout.buffer.write(sign(payload, private))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The diagnostics bundle: one zip a person can attach to a bug report, with nothing secret in it.

It holds what the caller gathered (versions, the OS, the confinement in force, the self-check's
timings), the settings without any key, the newest logs and the newest crash reports. Every file passes
`redact` on the way in, even logs that were redacted when written: a secret the app learnt about later
(a key added after the line was logged) is caught here too.
"""

from __future__ import annotations

import json
import time
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from orkas.adapter.settings.store import ProductSettings
from orkas.core.crashes import CrashReports
from orkas.core.logging import log_files
from orkas.core.redact import redact

LOG_BYTES = 20 * 1024 * 1024  # the newest logs, up to this much
CRASHES = 20
README = """Orkas diagnostics, written {when}.

about.json       versions, operating system, the sandbox in force
self-check.json  how long the basic operations took on this machine
settings.json    providers, models and preferences - no keys (keys live in the vault and are not here)
logs/            the newest log files
crashes/         the newest crash reports

Every file was redacted before it was written: keys, tokens, passwords, email addresses, phone
numbers and your home folder's name are replaced. Read it before you share it; nothing was sent.
"""


def settings_without_secrets(product: ProductSettings) -> dict[str, Any]:
    """What is configured, never a key: credentials appear as 'has a key', nothing more."""
    return {
        "providers": [
            {"name": p.name, "kind": p.kind, "base_url": p.base_url, "models": p.models}
            for p in product.providers.values()
        ],
        "entries": [
            {"provider": e.provider, "model": e.model, "has_key": e.credential is not None} for e in product.entries
        ],
        "budgets": asdict(product.budgets),
        "preferences": asdict(product.preferences),
    }


def write_bundle(
    out: Path,
    *,
    data: Path,
    about: dict[str, Any],
    settings: dict[str, Any],
    self_check: dict[str, Any],
) -> Path:
    """Write the zip to `out` (atomically: a reader never sees half a bundle); returns `out`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as bundle:

        def put(name: str, text: str) -> None:
            bundle.writestr(name, redact(text))

        put("README.txt", README.format(when=time.strftime("%Y-%m-%d %H:%M:%S %z")))
        put("about.json", json.dumps(about, indent=2, default=str))
        put("self-check.json", json.dumps(self_check, indent=2, default=str))
        put("settings.json", json.dumps(settings, indent=2, default=str))
        room = LOG_BYTES
        for path in log_files(data):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if room <= 0:
                break
            put(f"logs/{path.name}", text[-room:])
            room -= len(text)
        for crash in CrashReports(data / "crashes").all()[:CRASHES]:
            put(f"crashes/{crash.id}.json", json.dumps(crash.public(), indent=1))
    partial.replace(out)
    return out


def default_name() -> str:
    return f"orkas-diagnostics-{time.strftime('%Y%m%d-%H%M%S')}.zip"

"""`orkas diagnostics` and Settings → About → Save diagnostics: what goes into the bundle and the
self-check that times the basic operations on this machine.

The self-check never calls a provider unless asked (`--check-providers`): the bundle is often made
when something is wrong with the network, and a check must not send anything the person did not ask
to send.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import os
import platform
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from orkas import __version__
from orkas.adapter.settings.diagnostics import default_name, settings_without_secrets, write_bundle
from orkas.app import Settings, confinement_report, load_configured, sandbox
from orkas.core.logging import current, logs_dir
from orkas.engine.sandbox import PathPolicy

PACKAGES = ("anthropic", "httpx", "fastapi", "uvicorn", "pywebview", "PySide6", "faiss-cpu", "numpy", "mcp", "flet")


def about(settings: Settings) -> dict[str, Any]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    setup = current()
    return {
        "orkas": __version__,
        "python": sys.version.split()[0],
        "os": platform.platform(),
        "machine": platform.machine(),
        "processors": os.cpu_count(),
        "packages": versions,
        "data_folder": str(settings.data_dir),
        "logs": str(logs_dir(settings.data_dir)),
        "log_level": logging.getLevelName(setup.file.level).lower() if setup is not None else None,
        "sandbox": confinement_report(settings).as_dict(),
    }


async def self_check(settings: Settings, *, check_providers: bool = False) -> dict[str, Any]:
    """Each step: how long it took and what it found; a failing step says why and the rest go on."""
    steps: dict[str, Any] = {}

    async def step(name: str, action: Callable[[], Awaitable[Any]]) -> None:
        began = time.perf_counter()
        try:
            found = await action()
            steps[name] = {"ok": True, "ms": round((time.perf_counter() - began) * 1000, 1), "found": found}
        except Exception as e:  # a self-check reports, it does not stop
            steps[name] = {"ok": False, "ms": round((time.perf_counter() - began) * 1000, 1), "problem": f"{e}"}

    async def read_settings() -> Any:
        configured = await asyncio.to_thread(load_configured, settings)
        return {"providers": len(configured.product.providers), "problems": configured.problems}

    async def count_sessions() -> Any:
        folder = settings.data_dir / "sessions"
        return len(list(folder.glob("*.jsonl"))) if folder.is_dir() else 0

    async def run_a_command() -> Any:
        with tempfile.TemporaryDirectory(prefix="orkas-self-check-") as workspace:
            executor = sandbox(settings, PathPolicy(Path(workspace)))
            result = await executor.run("echo self-check", timeout=30)
            if "self-check" not in result.output:
                raise RuntimeError(f"the command did not answer as expected (exit {result.exit_code})")
            return {"confinement": executor.confined}

    async def providers() -> Any:
        from orkas.app import check_provider

        configured = await asyncio.to_thread(load_configured, settings)
        results: dict[str, Any] = {}
        for name in configured.product.providers:
            if not check_providers:
                results[name] = "not checked (pass --check-providers to call it)"
                continue
            answers = await check_provider(configured.product, configured.vault, name)
            results[name] = [{"ok": a["ok"], "message": a["message"]} for a in answers]
        return results

    await step("settings", read_settings)
    await step("sessions", count_sessions)
    await step("command in the sandbox", run_a_command)
    await step("providers", providers)
    return steps


async def save_diagnostics(settings: Settings, out: Path | None = None, *, check_providers: bool = False) -> Path:
    target = out or settings.data_dir / "diagnostics" / default_name()
    checked = await self_check(settings, check_providers=check_providers)
    configured = await asyncio.to_thread(load_configured, settings)
    return await asyncio.to_thread(
        write_bundle,
        target,
        data=settings.data_dir,
        about=about(settings),
        settings=settings_without_secrets(configured.product),
        self_check=checked,
    )

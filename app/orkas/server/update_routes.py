"""Settings → About's updates.

- `GET /api/updates`: the installed version, what the feed offers (version, notes, size, whether it moves the data
  folder to a newer format), what is going on (checking, downloading with bytes done, preparing), the last
  failure, and the two settings (checking on or off, the feed's address);
- `POST /api/updates/check`: "Check now" — and a newer version starts downloading in the background;
- `POST /api/updates/install`: the person said yes. The portable build is prepared (downloaded, verified,
  unpacked beside this one, started once) and the app restarts into it; a .deb answers with the command to
  type (and `POST /api/updates/open` hands the file to the desktop's software installer); a failure answers
  409 with the sentence, and the running version is untouched.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from orkas.server.routing import Api, HTTPException
from orkas.server.services import Services

if TYPE_CHECKING:
    from orkas.adapter.updates.updater import Updater

log = logging.getLogger(__name__)
RESTART_AFTER = 0.3  # seconds: the answer reaches the page before the server goes


def add_update_routes(api: Api, services: Services, updater: Callable[[], Updater]) -> None:
    """`services.restart` (read when the person says yes): how the app closes itself to start the new version;
    None where it cannot, and then the prepared version waits for the next start by hand."""
    background: set[asyncio.Task[Any]] = set()

    def status() -> dict[str, Any]:
        preferences = services.settings.load().preferences
        return updater().status() | {"check": preferences.update_check, "feed": preferences.update_feed}

    @api.get("/api/updates")
    async def updates_status() -> dict[str, Any]:
        return await asyncio.to_thread(status)

    @api.post("/api/updates/check")
    async def updates_check() -> dict[str, Any]:
        from orkas.adapter.updates.feed import UpdateError

        try:
            newer = await asyncio.to_thread(updater().check)
        except UpdateError as e:
            log.info("update check failed: %s", e)
            return await asyncio.to_thread(status)
        if newer is not None:
            task = asyncio.create_task(_download(updater()))
            background.add(task)
            task.add_done_callback(background.discard)
        return await asyncio.to_thread(status)

    @api.post("/api/updates/install")
    async def updates_install() -> dict[str, Any]:
        from orkas.adapter.updates.feed import UpdateError
        from orkas.adapter.updates.install import others_running

        current = updater()
        folder = current.installed.folder
        running = await asyncio.to_thread(others_running, folder) if folder is not None else []
        if running:  # it would start importing the new version's modules: it must close first
            pids = ", ".join(map(str, running))
            raise HTTPException(
                status_code=409, detail=f"another Orkas runs from {folder} (process {pids}): close it first"
            )
        try:
            prepared = await asyncio.to_thread(current.prepare)
        except UpdateError as e:
            raise HTTPException(status_code=409, detail=str(e)) from None
        restart = services.restart
        restarting = prepared.staged is not None and restart is not None
        if restart is not None and restarting:
            current.pending = prepared
            log.info("installing Orkas %s: the app restarts", prepared.version)
            asyncio.get_running_loop().call_later(RESTART_AFTER, restart)
        return await asyncio.to_thread(status) | {"restarting": restarting}

    @api.post("/api/updates/open")
    async def updates_open() -> dict[str, Any]:
        prepared = updater().progress.prepared
        if prepared is None or prepared.file is None:
            raise HTTPException(status_code=409, detail="no downloaded installer to open: install first")
        from orkas.engine.sandbox.executor import open_with_desktop

        return {"opened": await asyncio.to_thread(open_with_desktop, prepared.file)}


async def _download(updater: Updater) -> None:
    from orkas.adapter.updates.feed import UpdateError

    try:
        await asyncio.to_thread(updater.download)
    except UpdateError as e:  # kept in the status for the page
        log.info("update download failed: %s", e)

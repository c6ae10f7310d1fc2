"""Crash reports and the diagnostics bundle, for the page.

- `GET /api/crashes`: reports the person has not been shown yet (the next start shows them);
- `POST /api/crashes/seen`: they have been shown;
- `POST /api/crashes`: the page's own unhandled errors (`window.onerror`, unhandled rejections),
  capped per launch so a page stuck in an error loop cannot fill the disk;
- `POST /api/diagnostics`: write a bundle under `<data>/diagnostics/` and say where;
- `GET /api/diagnostics/{name}`: download it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field
from starlette.responses import FileResponse

from orkas.core.crashes import CrashReports
from orkas.server.routing import Api, HTTPException

log = logging.getLogger(__name__)
PAGE_REPORTS_PER_LAUNCH = 20
BUNDLE_NAME = re.compile(r"^orkas-diagnostics-[0-9-]+\.zip\Z")


class PageError(BaseModel):
    kind: Literal["error", "rejection"] = "error"
    message: str = Field(max_length=4000)
    stack: str = Field(default="", max_length=32_000)
    source: str = Field(default="", max_length=2000)
    line: int | None = None
    column: int | None = None


def add_diagnostics_routes(
    api: Api, crashes: CrashReports, save: Callable[[], Awaitable[Path]] | None, bundles: Path
) -> None:
    """`save` writes a bundle into the folder `bundles` and returns its path."""
    recorded = {"page": 0}

    @api.get("/api/crashes")
    async def crashes_unseen() -> dict[str, Any]:
        unseen = crashes.unseen()
        return {"unseen": [crash.public() for crash in unseen]}

    @api.post("/api/crashes/seen")
    async def crashes_seen() -> dict[str, Any]:
        crashes.mark_seen()
        return {"ok": True}

    @api.post("/api/crashes", status_code=201)
    async def crashes_from_page(body: PageError) -> dict[str, Any]:
        if recorded["page"] >= PAGE_REPORTS_PER_LAUNCH:
            raise HTTPException(status_code=429, detail="enough page errors were recorded in this launch")
        recorded["page"] += 1
        where = f"{body.source}:{body.line}:{body.column}" if body.source else ""
        details = "\n".join(part for part in (where, body.stack) if part)
        summary = f"page {'unhandled rejection' if body.kind == 'rejection' else 'error'}: {body.message}"
        crash = crashes.record("page", summary, details)
        log.error("the page reported an error; crash report %s: %s", crash.id, summary)
        return {"id": crash.id}

    @api.post("/api/diagnostics")
    async def diagnostics_save() -> dict[str, Any]:
        if save is None:
            raise HTTPException(status_code=404, detail="diagnostics are not available here")
        path = await save()
        log.info("diagnostics saved: %s (%d bytes)", path.name, path.stat().st_size)
        return {"name": path.name, "path": str(path), "bytes": path.stat().st_size}

    @api.get("/api/diagnostics/{name}")
    async def diagnostics_download(name: str) -> FileResponse:
        if save is None or not BUNDLE_NAME.match(name):
            raise HTTPException(status_code=404, detail="no such diagnostics bundle")
        path = bundles / name
        if not path.is_file():
            raise HTTPException(status_code=404, detail="no such diagnostics bundle")
        return FileResponse(path, media_type="application/zip", filename=name)

"""Each request is logged without its query, and a route that raises leaves a crash report (and a 500)."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from orkas.core.crashes import CrashReports
from orkas.server.observe import Observed
from orkas.server.routing import Api


def app_with_a_bug() -> Api:
    api = Api()

    @api.get("/api/broken")
    async def broken() -> None:
        raise ValueError("exploded while holding sk-ant-routekey-0123456789")

    @api.get("/api/fine")
    async def fine() -> dict[str, bool]:
        return {"ok": True}

    return api


async def test_a_route_that_raises_leaves_a_redacted_crash_report(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    reports = CrashReports(tmp_path / "crashes", process="server")
    app = Observed(app_with_a_bug(), crashes=reports)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    with caplog.at_level(logging.DEBUG, logger="orkas.server.requests"):
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            assert (await client.get("/api/broken?token=launch-token-abcdef")).status_code == 500
            assert (await client.get("/api/fine?token=launch-token-abcdef")).status_code == 200
    [crash] = reports.all()
    assert crash.source == "server" and crash.summary.startswith("ValueError: exploded")
    assert "sk-ant-routekey" not in crash.summary + crash.details and "Traceback" in crash.details
    logged = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("GET /api/broken 500") for m in logged)
    assert any(m.startswith("GET /api/fine 200") for m in logged)
    assert not any("launch-token" in m for m in logged)  # the query is never logged


async def test_a_paths_control_characters_cannot_forge_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    app = Observed(app_with_a_bug(), crashes=None)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    with caplog.at_level(logging.DEBUG, logger="orkas.server.requests"):
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            await client.get("/api/x%0D%0AGET /api/admin 200%00")
    [line] = [r.getMessage() for r in caplog.records if "/api/x" in r.getMessage()]
    assert "\r" not in line and "\n" not in line and "\x00" not in line
    assert line.startswith("GET /api/x\\r\\nGET /api/admin 200\\x00 404")

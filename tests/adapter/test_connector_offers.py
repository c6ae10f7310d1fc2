"""A connector's prompts and resources through the hub, against a real SDK server (tests/fixtures/mcp_server.py
with `--offers`, over stdio): listed with their arguments, filled in, read (text and a blob);
a prompt's missing argument and an unknown resource said; and the lists fetched again after the server says they
changed — never before."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from orkas.core.errors import ToolInputError
from orkas.engine.abort import AbortSignal
from orkas.engine.tools.connectors import ConnectorError
from tests.adapter.test_connector_hub import add_local, hub_for


async def test_prompts_and_resources_are_listed_filled_in_read_and_follow_changes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    add_local(data, "test", "--offers")
    hub = hub_for(data)
    try:
        [review] = await hub.prompts()
        assert (review.server, review.name, review.title) == ("test", "review", "Review code")
        assert [(a.name, a.required) for a in review.arguments] == [("code", True), ("focus", False)]
        text = await hub.prompt("test", "review", {"code": "x = 1"})
        assert text == "Please review this code for bugs:\nx = 1"
        with pytest.raises(ConnectorError, match="test:"):
            await hub.prompt("test", "review", {})  # the required `code` is missing: the server says so
        listed = {r.uri: r for r in await hub.resources()}
        assert set(listed) == {"notes://today", "files://logo.png"}
        assert listed["notes://today"].mime_type == "text/markdown"
        name, body, mime = await hub.read_resource("test", "notes://today")
        assert (name, body, mime) == ("today", b"# Today\n- water the garden", "text/markdown")
        _, png, png_type = await hub.read_resource("test", "files://logo.png")
        assert png.startswith(b"\x89PNG") and png_type == "image/png"
        with pytest.raises(ToolInputError, match="no resource of test 'notes://secret'"):
            await hub.read_resource("test", "notes://secret")

        await hub.call(await hub.tool("test", "grow"), {}, AbortSignal())  # the server's lists change
        deadline = time.monotonic() + 10
        while {p.name for p in await hub.prompts()} != {"review", "summarize"}:
            assert time.monotonic() < deadline, "the new prompt never showed"
            await asyncio.sleep(0.05)
        assert "notes://tomorrow" in {r.uri for r in await hub.resources()}
        assert await hub.prompt("test", "summarize", {"text": "a long day"}) == "Summarize: a long day"
    finally:
        await hub.close()


async def test_a_server_without_offers_offers_nothing_and_one_that_is_down_is_left_out(tmp_path: Path) -> None:
    data = tmp_path / "data"
    add_local(data, "plain")  # no --offers: no prompts, no resources
    from orkas.adapter.connectors.config import Connectors

    Connectors(data / "connectors.json", None).add("gone", command=["/no/such/server"])
    hub = hub_for(data)
    try:
        assert await hub.prompts() == [] and await hub.resources() == []
    finally:
        await hub.close()

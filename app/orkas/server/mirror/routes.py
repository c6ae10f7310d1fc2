"""The desktop's side of the phone mirror (on the desktop API, never on the mirror's port): turn it on or
off, make a pairing code with its QR code, list and revoke paired phones."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from orkas.adapter.settings.mirror_devices import MirrorDevices
from orkas.server.answers import config
from orkas.server.mirror.server import MirrorServer
from orkas.server.routing import Api, HTTPException, Response


@dataclass
class MirrorControl:
    devices: MirrorDevices
    server: MirrorServer
    remember: Callable[[bool], Awaitable[None]]  # saves "on" or "off" in the preferences


class Switch(BaseModel):
    enabled: bool


def qr_image(text: str) -> str:
    """The QR code as an SVG data: URI (the page shows it as an image: no markup is inserted)."""
    import segno  # only when a pairing is asked for

    return str(segno.make(text, error="m").svg_data_uri(scale=6, dark="#000", light="#fff"))


def add_mirror_routes(api: Api, mirror: MirrorControl) -> None:
    def status() -> dict[str, Any]:
        server = mirror.server
        return {
            "enabled": server.running,
            "url": server.url if server.running else "",
            "fingerprint": server.certificate.fingerprint if server.certificate and server.running else "",
            "devices": [d.view() for d in mirror.devices.devices()],
        }

    @api.get("/api/mirror")
    async def mirror_status() -> dict[str, Any]:
        return status()

    @api.post("/api/mirror")
    async def mirror_switch(body: Switch) -> dict[str, Any]:
        if body.enabled:
            try:
                await asyncio.to_thread(mirror.server.bind)
            except OSError as e:
                raise HTTPException(
                    status_code=409, detail=f"the phone mirror cannot listen: {e.strerror or e}"
                ) from None
            mirror.server.start()
        else:
            await mirror.server.stop()
        await mirror.remember(body.enabled)
        return status()

    @api.post("/api/mirror/pairings", status_code=201)
    async def pairing_start() -> dict[str, Any]:
        server = mirror.server
        if not server.running or server.certificate is None:
            raise HTTPException(status_code=409, detail="turn the phone mirror on first (Settings → Phone)")
        pairing = mirror.devices.start_pairing()
        # A query, not a fragment: the phone view's session reads it (the code is spent on first use).
        link = (
            f"{server.url}/m/#/?pair={pairing.code}&fp={server.certificate.fingerprint}"  # the view routes by the "#"
        )
        return {
            "code": pairing.code,
            "expires_at": pairing.expires_at,
            "url": server.url,
            "fingerprint": server.certificate.fingerprint,
            "link": link,  # what the QR code holds: the phone view, the code and the fingerprint
            "qr": await asyncio.to_thread(qr_image, link),
        }

    @api.get("/api/mirror/devices")
    async def devices_list() -> list[dict[str, Any]]:
        return [d.view() for d in mirror.devices.devices()]

    @api.delete("/api/mirror/devices/{device_id}", status_code=204)
    async def devices_revoke(device_id: str) -> Response:
        config(lambda: mirror.devices.revoke(device_id))
        return Response(status_code=204)

"""The phone view's only way to the conversations: the mirror's sync API, over its own TLS port.

The Flet session runs in this process, but it goes through the same door a phone app would (the
device token on every call, the Host check, revocation at once) instead of reaching into the runtime:
what the phone can do is exactly what the API allows, and the API's tests cover it. It trusts nothing
but this install's own certificate.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

V1 = "/mirror/api/v1"
RETRY_FIRST, RETRY_MOST = 0.3, 5.0  # seconds between reconnects, doubling


class Unpaired(Exception):
    """The token was refused: never paired, or revoked on the computer."""


class MirrorRefused(Exception):
    """The mirror said no, with a reason a person can read (a wrong code, too many tries, a full upload)."""


@dataclass(frozen=True)
class Target:
    base: str  # https://HOST:PORT of the mirror, as this process reaches it
    cafile: Path  # the mirror's own certificate: the only one trusted

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cafile))


class MirrorClient:
    def __init__(self, target: Target, token: str = "") -> None:
        self.target = target
        self.token = token
        self._ssl = target.context()
        self._http = httpx.AsyncClient(base_url=target.base + V1, verify=self._ssl, timeout=30)

    async def close(self) -> None:
        await self._http.aclose()

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        return (await self._request(method, path, **kwargs)).json()

    async def _request(self, method: str, path: str, accept: tuple[int, ...] = (), **kwargs: Any) -> httpx.Response:
        try:
            headers = {**self._headers(), **kwargs.pop("headers", {})}
            response = await self._http.request(method, path, headers=headers, **kwargs)
        except httpx.HTTPError as e:
            raise MirrorRefused(f"the computer did not answer ({type(e).__name__})") from None
        if response.status_code == 401 and path != "/pair":
            raise Unpaired(_detail(response))
        if response.status_code >= 400 and response.status_code not in accept:
            raise MirrorRefused(_detail(response))
        return response

    async def pair(self, code: str, device_name: str) -> str:
        answer = await self._call("POST", "/pair", json={"code": code.strip(), "device_name": device_name})
        self.token = str(answer["device_token"])
        return self.token

    async def conversations(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = await self._call("GET", "/conversations")
        return found

    async def sign_ins(self) -> list[dict[str, Any]]:
        """Connectors waiting for a sign-in on the computer: [{"name", "again"}]. An older Orkas has no such
        route: nothing to say, then."""
        response = await self._request("GET", "/connectors", accept=(404,))
        if response.status_code == 404:
            return []
        found: list[dict[str, Any]] = response.json().get("signin", [])
        return found

    async def create(self) -> dict[str, Any]:
        """A new chat, shaped as the list's entries."""
        made: dict[str, Any] = await self._call("POST", "/conversations", json={})
        return made

    async def messages(
        self, conversation: str, after: int = -1, *, limit: int | None = None, before: str = ""
    ) -> dict[str, Any]:
        """The history (its newest `limit` messages; with `before`, only the page before that message)."""
        params: dict[str, Any] = {"after": after}
        if limit is not None:
            params["limit"] = limit
        if before:
            params["before"] = before
        found: dict[str, Any] = await self._call("GET", f"/conversations/{quote(conversation)}/messages", params=params)
        return found

    async def send(self, conversation: str, text: str, attachments: list[str] | None = None) -> None:
        body = {"text": text, "attachments": attachments or []}
        await self._call("POST", f"/conversations/{quote(conversation)}/messages", json=body)

    async def retry(self, conversation: str, message: str) -> None:
        """Answer the person's message `message` again (after an error)."""
        await self._call("POST", f"/conversations/{quote(conversation)}/messages/{quote(message)}/regenerate", json={})

    async def rewind_preview(self, conversation: str, message: str, mode: str) -> dict[str, Any]:
        """What rewinding to before `message` would do (nothing changes)."""
        path = f"/conversations/{quote(conversation)}/rewind"
        said: dict[str, Any] = await self._call("GET", path, params={"to": message, "mode": mode})
        return said

    async def rewind(self, conversation: str, message: str, mode: str) -> dict[str, Any]:
        path = f"/conversations/{quote(conversation)}/rewind"
        done: dict[str, Any] = await self._call("POST", path, json={"to": message, "mode": mode})
        return done

    async def image(self, conversation: str, attachment: str) -> bytes:
        """An attached image's bytes (only images the conversation holds; anything else is refused)."""
        path = f"/conversations/{quote(conversation)}/attachments/{quote(attachment)}"
        response = await self._request("GET", path)
        return response.content

    async def stop(self, conversation: str) -> None:
        await self._call("POST", f"/conversations/{quote(conversation)}/stop", json={})

    async def answer(self, conversation: str, question: str, decision: str) -> dict[str, Any] | None:
        """None when this answer was taken; the answer that closed the question first when this one came too late
        (another view answered): its decision and who gave it."""
        body = {"question_id": question, "decision": decision}
        path = f"/conversations/{quote(conversation)}/answers"
        response = await self._request("POST", path, accept=(409,), json=body)
        if response.status_code == 409:
            return dict(response.json().get("answered") or {})
        return None

    async def undo_memory(self, target: str, entry: str, replaced: str | None, removed: bool = False) -> None:
        body = {"target": target, "entry": entry, "replaced": replaced, "removed": removed}
        await self._call("POST", "/memory/undo", json=body)

    async def upload(self, conversation: str, name: str, data: bytes) -> dict[str, Any]:
        found: dict[str, Any] = await self._call(
            "POST",
            f"/conversations/{quote(conversation)}/attachments",
            params={"name": name},
            content=data,
            headers={"Content-Type": "application/octet-stream"},
        )
        return found

    async def events(self, conversation: str, after: int) -> AsyncIterator[dict[str, Any]]:
        """The conversation's events after `after`, for as long as it is watched: a dropped socket (the
        computer slept, the mirror restarted) is reopened after the last event seen, so nothing is
        lost and nothing shows twice."""
        async for event in self._socket(f"events?conversation={quote(conversation)}", after):
            yield event

    async def alerts(self) -> AsyncIterator[dict[str, Any]]:
        async for event in self._socket("alerts?", None):
            yield event

    async def _socket(self, query: str, after: int | None) -> AsyncIterator[dict[str, Any]]:
        wait = RETRY_FIRST
        url = self.target.base.replace("https://", "wss://", 1) + f"{V1}/{query}"
        while True:
            address = url if after is None else f"{url}&after={after}"
            try:
                async with connect(address, ssl=self._ssl, additional_headers=self._headers(), max_size=None) as ws:
                    async for raw in ws:
                        message = json.loads(raw)
                        for event in message if isinstance(message, list) else [message]:  # batched
                            if event.get("type") == "hello":
                                wait = RETRY_FIRST
                                continue
                            if after is not None and isinstance(event.get("seq"), int):
                                after = max(after, event["seq"])
                            yield event
            except InvalidStatus as e:
                if e.response.status_code == 401:
                    raise Unpaired("this phone is no longer paired") from None
            except ConnectionClosed as e:
                if e.rcvd is not None and e.rcvd.code == 4401:
                    raise Unpaired("this phone was unpaired on the computer") from None
                if e.rcvd is not None and e.rcvd.code == 4404:
                    raise MirrorRefused(e.rcvd.reason) from None
            except (OSError, TimeoutError, WebSocketException):
                pass  # the mirror is off, restarting or was cut mid-handshake: try again
            await asyncio.sleep(wait)
            wait = min(wait * 2, RETRY_MOST)


def _detail(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", response.reason_phrase))
    except (ValueError, AttributeError):
        return response.reason_phrase

"""The bottom of a chat on the phone: what is attached, the group's names offered after `@`, Stop while the agent
works, and the message field between Attach and Send.

Stop sits here, in a row of its own with a word on it, not in the app bar beside Refresh, where a thumb meant for
one hit the other. A photo goes up over HTTP to a URL the session signed (app.py), then on to the conversation
through the API, like the desktop's attachments (same limits and rules).
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import flet as ft

from orkas.phone.client import MirrorClient
from orkas.phone.strings import Words
from orkas.phone.touch import icon_button, tall

MENTION = re.compile(r"@([\w.-]*)$")
UPLOAD_WINDOW = 300  # seconds a signed upload URL stays good

Guarded = Callable[[Awaitable[Any]], Awaitable[Any]]
Begin = Callable[[], Awaitable[str]]  # makes a blank chat; its id ("" if it could not be made)


class Composer:
    def __init__(self, page: ft.Page, client: MirrorClient, uploads: Path, guarded: Guarded) -> None:
        """`guarded` runs a call to the mirror, saying a refusal and unpairing on a refused token (the view's)."""
        self.page = page
        self.client = client
        self.uploads = uploads
        self.guarded = guarded
        self.picker = ft.FilePicker(on_upload=self._uploaded)
        self.uploading: dict[str, tuple[str, str]] = {}  # picked name -> (stored as, conversation)
        self.pending: list[str] = []  # attachment ids for the next message
        self.conversation = ""
        self.begin: Begin | None = None
        self.members: list[str] = []
        self.t = Words("en")

    def build(
        self, t: Words, conversation: str, members: list[str], running: bool, begin: Begin | None = None
    ) -> ft.Control:
        """The controls for one conversation's screen; a blank chat's (no `conversation` yet) makes it with `begin`
        when its first message (or photo) is sent."""
        self.t, self.conversation, self.members, self.pending = t, conversation, members, []
        self.begin = begin
        self.mentions = ft.Row(wrap=True, spacing=4, visible=False)
        self.field = ft.TextField(
            hint_text=t("message"),
            label=t("message"),
            multiline=True,
            min_lines=1,
            max_lines=5,
            shift_enter=True,
            expand=True,
            on_submit=self._send,
            on_change=self._suggest,
        )
        self.attached = ft.Text("", size=12, visible=False)
        stop = ft.FilledTonalButton(t("stop"), icon=ft.Icons.STOP_CIRCLE, on_click=self._stop)
        self.working = ft.Row(
            [ft.Text(t("running"), italic=True, expand=True), tall(stop)],
            visible=running,
        )
        row = ft.Row(
            [
                icon_button(ft.Icons.ADD_PHOTO_ALTERNATE, t("attach"), self._attach),
                self.field,
                icon_button(ft.Icons.SEND, t("send"), self._send),
            ],
            vertical_alignment=ft.CrossAxisAlignment.END,
        )
        return ft.Column([self.attached, self.mentions, self.working, row], tight=True)

    def running(self, running: bool) -> None:
        self.working.visible = running

    def leave(self) -> None:
        self.conversation, self.begin = "", None

    async def _made(self) -> str:
        """The chat this screen sends to: a blank one is made now, on its first message or photo."""
        if not self.conversation and self.begin is not None:
            begin, self.begin = self.begin, None  # once: a second tap meanwhile would make another
            self.conversation = await begin()
        return self.conversation

    async def _send(self, _: Any) -> None:
        text = (self.field.value or "").strip()
        if not text:
            return
        conversation = await self._made()
        if not conversation:
            return
        self.field.value = ""
        self.mentions.visible = False
        files, self.pending = self.pending, []
        self.attached.visible = False
        self.page.update()
        await self.guarded(self.client.send(conversation, text, files))

    async def _stop(self, _: Any) -> None:
        if self.conversation:
            await self.guarded(self.client.stop(self.conversation))

    async def _attach(self, _: Any) -> None:
        if not await self._made():
            return
        picked = await self.picker.pick_files(allow_multiple=False)
        for chosen in picked or []:
            stored_as = secrets.token_hex(12)  # never the phone's own file name on this disk
            self.uploading[chosen.name] = (stored_as, self.conversation)
            url = self.page.get_upload_url(stored_as, UPLOAD_WINDOW)
            await self.picker.upload([ft.FilePickerUploadFile(upload_url=url, id=chosen.id)])

    async def _uploaded(self, event: ft.FilePickerUploadEvent) -> None:
        if event.file_name not in self.uploading:
            return
        if event.error:
            self.uploading.pop(event.file_name)
            self._say(self.t("error", reason=event.error))
            return
        if event.progress is None or event.progress < 1:
            return
        stored_as, conversation = self.uploading.pop(event.file_name)
        path = self.uploads / stored_as
        try:
            data = await asyncio.to_thread(path.read_bytes)
        except OSError as e:
            self._say(self.t("error", reason=str(e)))
            return
        finally:
            path.unlink(missing_ok=True)
        stored = await self.guarded(self.client.upload(conversation, event.file_name, data))
        if stored and self.conversation == conversation:
            self.pending.append(str(stored["id"]))
            self.attached.value = self.t("attached", name=event.file_name)
            self.attached.visible = True
            self.page.update()

    def _suggest(self, _: Any) -> None:
        """`@` offers the group's members; a tap completes the name."""
        typed = MENTION.search(self.field.value or "")
        names = [m for m in self.members if typed and m.lower().startswith(typed.group(1).lower())]
        self.mentions.controls = [tall(ft.Chip(ft.Text(f"@{name}"), on_click=self._mentioner(name))) for name in names]
        self.mentions.visible = bool(names)
        self.page.update()

    def _mentioner(self, name: str) -> Callable[[Any], None]:
        def complete(_: Any) -> None:
            self.field.value = MENTION.sub(f"@{name} ", self.field.value or "")
            self.mentions.visible = False
            self.page.update()

        return complete

    def _say(self, text: str) -> None:
        self.page.show_dialog(ft.SnackBar(ft.Text(text)))

"""Rewind on the phone: from one of the person's messages, with the desktop's preview — the files that come back,
go, or are deleted, what cannot be undone — and a confirmation before anything changes (a dialog whose Rewind is
the only way on). The conversation part comes back over the socket (`history_changed`: the chat is read again)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import flet as ft

from orkas.phone.client import MirrorClient
from orkas.phone.strings import Words
from orkas.phone.touch import tall

LISTED = 5  # paths shown per kind on a phone; the desktop lists them all


class RewindDialog:
    def __init__(
        self,
        page: ft.Page,
        t: Words,
        client: MirrorClient,
        guarded: Callable[[Awaitable[Any]], Awaitable[Any]],
        say: Callable[[str], None],
    ) -> None:
        self.page, self.t, self.client, self.guarded, self.say = page, t, client, guarded, say

    async def offer(self, conversation: str, message: str, group: bool) -> None:
        t = self.t
        modes = ["files"] if group else ["both", "conversation", "files"]
        choice = ft.RadioGroup(
            ft.Column([ft.Radio(value=m, label=t(f"rewind_{m}")) for m in modes], tight=True), value=modes[0]
        )
        preview = ft.Column([ft.Text(t("rewind_looking"))], tight=True, spacing=4)
        go = ft.FilledButton(t("rewind"), disabled=True)
        dialog = ft.AlertDialog(
            modal=True,
            title=ft.Text(t("rewind_title")),
            content=ft.Column([choice, ft.Divider(), preview], tight=True, scroll=ft.ScrollMode.AUTO),
            actions=[tall(ft.TextButton(t("cancel"), on_click=lambda _: self.page.pop_dialog())), tall(go)],
        )

        async def show(_: Any = None) -> None:
            go.disabled = True
            preview.controls = [ft.Text(t("rewind_looking"))]
            self.page.update()
            said = await self.guarded(self.client.rewind_preview(conversation, message, str(choice.value)))
            if said is None:
                self.page.pop_dialog()
                return
            preview.controls = self._described(said)
            go.disabled = False
            self.page.update()

        async def rewind(_: Any) -> None:
            go.disabled = True
            self.page.update()
            done = await self.guarded(self.client.rewind(conversation, message, str(choice.value)))
            self.page.pop_dialog()
            if done is not None:
                files = done.get("files")
                count = sum(len(files[k]) for k in ("restore", "create", "delete")) if files else 0
                self.say(t("rewound_files", count=count) if files else t("rewound_talk"))

        choice.on_change = show
        go.on_click = rewind
        self.page.show_dialog(dialog)
        await show()

    def _described(self, said: dict[str, Any]) -> list[ft.Control]:
        t = self.t
        out: list[ft.Control] = []
        files = said.get("files")
        if files is not None:
            if not (files["restore"] or files["create"] or files["delete"]):
                out.append(ft.Text(t("rewind_same")))
            for kind in ("restore", "create", "delete"):
                paths = files[kind]
                if paths:
                    more = f" (+{len(paths) - LISTED})" if len(paths) > LISTED else ""
                    out.append(ft.Text(t(f"rewind_{kind}", count=len(paths)), weight=ft.FontWeight.BOLD))
                    out.append(ft.Text(", ".join(paths[:LISTED]) + more, size=12))
            if files["cannot"]:
                out.append(ft.Text(t("rewind_cannot", files=", ".join(files["cannot"][:LISTED])), size=12))
        for warning in said.get("warnings", []):
            out.append(ft.Text(t("rewind_outside", what=warning), color=ft.Colors.ERROR, size=12))
        if said.get("conversation"):
            out.append(ft.Text(t("rewind_talk"), size=12))
        return out

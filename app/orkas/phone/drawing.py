"""A transcript's items as Flet controls: bubbles (with thumbnails of attached photos), markers (with Retry after
an error, Undo after a memory write) and approval cards (with their risk). Drawing only: what a tap does is the
view's (`Acts`), so each item can be drawn again on its own when it changes."""

from __future__ import annotations

from typing import Any, Protocol

import flet as ft

from orkas.phone.strings import Words
from orkas.phone.touch import tall
from orkas.phone.transcript import ASSISTANT, USER, Bubble, File, Item, Marker, Question

THUMBNAIL = 160  # px: a photo's side in the transcript
ANSWERED = {
    "deny": "answered_deny",
    "allow_once": "answered_allow_once",
    "allow_run": "answered_allow_run",
    "always": "answered_always",
}
FEWEST_TOOLS = 5  # a bubble lists its last few tool calls; the rest is the desktop's detail
HIGH_RISK = "dangerous"


class Acts(Protocol):
    """What the controls do when tapped, and the photos they show (the view's side)."""

    async def answer(self, question: Question, decision: str) -> None: ...
    async def undo(self, marker: Marker) -> None: ...
    async def retry(self, item: Bubble | Marker) -> None: ...
    async def rewind(self, item: Bubble) -> None: ...
    def thumbnail(self, file: File, item: Item) -> bytes | None:
        """The photo's bytes, or None while they are fetched (the item is drawn again when they come)."""
        ...


class Drawing:
    def __init__(self, t: Words, acts: Acts) -> None:
        self.t = t
        self.acts = acts

    def control(self, item: Item) -> ft.Control:
        if isinstance(item, Question):
            return self._question(item)
        if isinstance(item, Marker) and item.kind == "remembered":
            return self._remembered(item)
        if isinstance(item, Marker):
            return self._marker(item)
        return self._bubble(item)

    def _marker(self, item: Marker) -> ft.Control:
        t = self.t
        text = t("stopped") if item.kind == "stopped" else t(item.phrase, **item.args) if item.phrase else item.text
        color = ft.Colors.ERROR if item.kind == "error" else ft.Colors.ON_SURFACE_VARIANT
        said = ft.Text(text, italic=True, color=color, text_align=ft.TextAlign.CENTER)
        if not item.retry:
            return said
        return ft.Column([said, self._retry(item)], horizontal_alignment=ft.CrossAxisAlignment.CENTER, tight=True)

    def _bubble(self, item: Bubble) -> ft.Control:
        t = self.t
        mine = item.who == USER
        lines: list[ft.Control] = []
        if not mine:
            lines.append(ft.Text(t("orkas") if item.who == ASSISTANT else item.who, weight=ft.FontWeight.BOLD, size=12))
        lines += [_with_icon(ft.Icons.BUILD_OUTLINED, tool, italic=True) for tool in item.tools[-FEWEST_TOOLS:]]
        for file in item.files:
            lines.append(_with_icon(ft.Icons.ATTACH_FILE, file.name))
            shown = self.acts.thumbnail(file, item) if file.image else None
            if shown is not None:
                lines.append(self._thumbnail(file, shown))
        if item.text:
            # Not selectable: Flutter hides selectable text from the accessibility tree (screen readers). The person's
            # own words as typed (the desktop too): a "[x](…)" they wrote is not a link they made.
            lines.append(
                ft.Text(item.text) if mine else ft.Markdown(item.text, extension_set=ft.MarkdownExtensionSet.GITHUB_WEB)
            )
        if item.streaming:  # a still marker: an animated bar keeps Flutter's accessibility tree from updating
            lines.append(ft.Text("…", size=12, color=ft.Colors.ON_SURFACE_VARIANT))
        if item.failed:
            said = t(item.failed_phrase) if item.failed_phrase else t("failed", reason=item.failed)
            lines.append(ft.Text(said, color=ft.Colors.ERROR, size=12))
        if item.retry:
            lines.append(self._retry(item))
        bubble = ft.Container(
            ft.Column(lines, spacing=4, tight=True),
            padding=10,
            border_radius=12,
            bgcolor=ft.Colors.PRIMARY_CONTAINER if mine else ft.Colors.SURFACE_CONTAINER_HIGHEST,
            expand=True,
        )
        row = ft.Row([bubble], alignment=ft.MainAxisAlignment.END if mine else ft.MainAxisAlignment.START)
        if not (mine and item.text):
            return row
        # Rewind under the person's own message, a button of its own (an icon's tooltip merged into the message).
        return ft.Column([row, ft.Row([self._rewind(item)], alignment=ft.MainAxisAlignment.END)], spacing=0, tight=True)

    def _thumbnail(self, file: File, data: bytes) -> ft.Control:
        return ft.Image(
            src=data,
            width=THUMBNAIL,
            height=THUMBNAIL,
            fit=ft.BoxFit.COVER,
            border_radius=8,
            semantics_label=self.t("photo", name=file.name),
        )

    def _retry(self, item: Bubble | Marker) -> ft.Control:
        async def retry(_: Any) -> None:
            await self.acts.retry(item)

        return tall(ft.OutlinedButton(self.t("retry"), icon=ft.Icons.REFRESH, on_click=retry))

    def _rewind(self, item: Bubble) -> ft.Control:
        async def rewind(_: Any) -> None:
            await self.acts.rewind(item)

        return tall(ft.TextButton(self.t("rewind"), icon=ft.Icons.HISTORY, on_click=rewind))

    def _remembered(self, item: Marker) -> ft.Control:
        """ "Remembered: …" with Undo: every memory write is seen, and can be taken back from here."""
        t = self.t
        words = t("forgot", entry=item.text) if item.removed else t("remembered", entry=item.text)
        said = ft.Text(words, italic=True, color=ft.Colors.ON_SURFACE_VARIANT, expand=True)
        if item.undone:
            return ft.Row([said, ft.Text(t("forgotten"), size=12)])

        async def undo(_: Any) -> None:
            await self.acts.undo(item)

        return ft.Row([said, tall(ft.TextButton(t("undo"), on_click=undo))])

    def _question(self, question: Question) -> ft.Control:
        t = self.t
        body: list[ft.Control] = [
            ft.Text(t("approval", tool=question.tool), weight=ft.FontWeight.BOLD),
            *self._risk(question),
            ft.Text(question.preview, font_family="monospace", size=12),
        ]
        if question.declined:
            body.append(ft.Text(t(f"declined_{question.declined}"), italic=True))
        elif question.decision:
            answer = t(ANSWERED.get(question.decision, "answered_allow"))  # which allow, as the desktop says it
            body.append(ft.Text(t("answered_by", answer=answer, who=question.by or t("desktop")), italic=True))
        else:
            body.append(
                ft.Row(
                    [
                        tall(ft.FilledButton(t("once"), on_click=self._answerer(question, "once"))),
                        tall(ft.OutlinedButton(t("run"), on_click=self._answerer(question, "run"))),
                        tall(ft.TextButton(t("deny"), on_click=self._answerer(question, "deny"))),
                    ],
                    wrap=True,
                    run_spacing=8,
                )
            )
        return ft.Card(ft.Container(ft.Column(body, tight=True, spacing=6), padding=12))

    def _risk(self, question: Question) -> list[ft.Control]:
        """How risky the action is, what it does and what approving grants: the desktop card's, in words."""
        t = self.t
        said = [t(f"risk_{question.level}")] if t.knows(f"risk_{question.level}") else []
        # The level says it already ("Medium risk: runs a program"), and two programs are one "runs a program".
        doing = [c for c in dict.fromkeys(question.categories) if c != question.level]
        said += [t(f"category_{c}") if t.knows(f"category_{c}") else c for c in doing]
        color = ft.Colors.ERROR if question.level == HIGH_RISK else ft.Colors.ON_SURFACE_VARIANT
        lines: list[ft.Control] = []
        if said:
            lines.append(ft.Text(" · ".join(said), color=color, size=12, weight=ft.FontWeight.W_600))
        if t.knows(f"effect_{question.effect}"):
            lines.append(ft.Text(t(f"effect_{question.effect}"), size=12, color=color))
        return lines

    def _answerer(self, question: Question, decision: str) -> Any:
        async def answer(_: Any) -> None:
            await self.acts.answer(question, decision)

        return answer


def _with_icon(icon: ft.IconData, text: str, *, italic: bool = False) -> ft.Control:
    """A tool call or a file in a bubble (icons, not emoji: the bundled fonts have none)."""
    return ft.Row([ft.Icon(icon, size=14), ft.Text(text, size=12, italic=italic, expand=True)], spacing=4)


def pill(text: str) -> ft.Control:
    """A small count on a list's row ("3 new")."""
    return ft.Container(
        ft.Text(text, size=12, color=ft.Colors.ON_PRIMARY),
        bgcolor=ft.Colors.PRIMARY,
        border_radius=10,
        padding=ft.Padding(left=8, right=8, top=2, bottom=2),
    )

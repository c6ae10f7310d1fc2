"""The phone view (Flet, web mode): pair, the conversation list, one conversation live.

It holds no state of its own: everything it shows comes from the mirror's sync API (client.py) and is
drawn from a `Transcript`; the device token lives in the phone's browser storage and nowhere else on
this side. One session per phone tab, run by Flet in this process.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import flet as ft

from orkas.phone.client import MirrorClient, MirrorRefused, Target, Unpaired
from orkas.phone.navigation import LIST, Navigator, chat_of, chat_route
from orkas.phone.strings import Words, language
from orkas.phone.transcript import USER, Item, Marker, Question, Transcript

log = logging.getLogger(__name__)
TOKEN_KEY = "orkas.device_token"
LANG_KEY = "orkas.lang"  # written by index.html from navigator.languages before the app starts
THEME_KEY = "orkas.theme"
OPEN_KEY = "orkas.open"  # the conversation on screen, so a fresh page (or session) opens it again
LIST_ALERTS = ("permission_request", "permission_answered", "done", "error", "turn_end")
REDRAW_EVERY = 0.05  # seconds: streamed text is redrawn at most this often (a delta per frame would flood)
PULL = 60  # pixels pulled down past the top of the list to refresh it
UPLOAD_WINDOW = 300  # seconds a signed upload URL stays good
MENTION = re.compile(r"@([\w.-]*)$")


def make_main(target: Target, uploads: Path) -> Callable[[ft.Page], Awaitable[None]]:
    async def main(page: ft.Page) -> None:
        await PhoneView(page, target, uploads).start()

    return main


class PhoneView:
    def __init__(self, page: ft.Page, target: Target, uploads: Path) -> None:
        self.page = page
        self.client = MirrorClient(target)
        self.uploads = uploads
        self.uploading: dict[str, tuple[str, str]] = {}  # picked name -> (stored as, conversation)
        self.prefs = ft.SharedPreferences()
        self.picker = ft.FilePicker(on_upload=self._uploaded)
        self.t = Words("en")
        self.watching: asyncio.Task[None] | None = None
        self.chat: Transcript | None = None
        self.drawn: dict[str, ft.Control] = {}
        self.dirty: dict[str, Item] = {}
        self.flush: asyncio.Task[None] | None = None
        self.errands: set[asyncio.Task[None]] = set()  # fire-and-forget work, held until done
        self.members: list[str] = []
        self.pending: list[str] = []  # attachment ids for the next message
        self.listed: list[dict[str, Any]] = []
        self.alerted: set[tuple[Any, Any]] = set()
        self.current: dict[str, Any] = {}
        self.nav = Navigator(page, self._show)
        page.on_close = self._closed

    # ---- start and pairing ----
    async def start(self) -> None:
        page = self.page
        page.title = "Orkas"
        page.fonts = {"cjk": "fonts/cjk.ttf"}  # Chinese would be boxes without it
        page.theme = ft.Theme(font_family="cjk", color_scheme_seed=ft.Colors.INDIGO)
        page.dark_theme = ft.Theme(font_family="cjk", color_scheme_seed=ft.Colors.INDIGO)
        saved_theme = await self.prefs.get(THEME_KEY)
        page.theme_mode = {"light": ft.ThemeMode.LIGHT, "dark": ft.ThemeMode.DARK}.get(
            str(saved_theme), ft.ThemeMode.SYSTEM
        )
        self.t = Words(language(str(await self.prefs.get(LANG_KEY) or "en").split(",")))
        token = await self.prefs.get(TOKEN_KEY)
        query = parse_qs(page.route.partition("?")[2])
        code = (query.get("pair") or [""])[0]
        if isinstance(token, str) and token and not code:
            self.client.token = token
            # Back where the person was: the address a reload keeps, else the chat a restart left open (read
            # before the list, which forgets it). The list first, so Back from the chat goes to it.
            opened = chat_of(page.route) or await self.prefs.get(OPEN_KEY)
            await self.nav.go(LIST)
            if any(c.get("id") == opened for c in self.listed):
                await self.nav.go(chat_route(str(opened)))
            return
        self.show_pairing(code, (query.get("fp") or [""])[0])

    def show_pairing(self, code: str = "", fingerprint: str = "", note: str = "") -> None:
        t = self.t
        self._stop_watching()
        # An on_change (even one doing nothing) makes Flet send each keystroke at once, so a quick tap on
        # Pair never reads a value from before the last edit.
        code_field = ft.TextField(label=t("code"), value=code, autofocus=not code, on_change=_kept)
        name_field = ft.TextField(
            label=t("device_name"), value=_device_name(self.page.client_user_agent or ""), on_change=_kept
        )
        problem = ft.Text(note, color=ft.Colors.ERROR)

        async def pair(_: Any) -> None:
            try:
                token = await self.client.pair(code_field.value or "", name_field.value or "Phone")
            except (MirrorRefused, Unpaired) as e:
                problem.value = str(e)
                self.page.update()
                return
            await self.prefs.set(TOKEN_KEY, token)
            await self.nav.go(LIST)  # and the code, spent, leaves the address bar

        rows: list[ft.Control] = [
            ft.Text(t("pair_title"), size=24, weight=ft.FontWeight.BOLD),
            ft.Text(t("pair_help")),
            code_field,
            name_field,
            ft.FilledButton(t("pair"), on_click=pair),
            problem,
        ]
        if fingerprint:
            rows.insert(2, ft.Text(t("fingerprint", fingerprint=fingerprint), size=12))
        self._screen(None, ft.Column(rows, spacing=16, scroll=ft.ScrollMode.AUTO, expand=True))

    async def _unpaired(self) -> None:
        await self.prefs.remove(TOKEN_KEY)
        self.client.token = ""
        self.show_pairing(note=self.t("unpaired"))

    # ---- the conversation list ----
    async def show_list(self) -> None:
        self._stop_watching()
        chats = await self.client.conversations()
        self.listed = chats
        await self.prefs.remove(OPEN_KEY)
        t = self.t
        tiles: list[ft.Control] = []
        for chat in chats:
            status = [t("waiting")] if chat.get("waiting") else []
            status += [t("running")] if chat.get("running") else []
            if chat.get("members"):
                status.append(t("floor", name=chat.get("floor") or "commander"))
            unread = int(chat.get("unread") or 0)
            tiles.append(
                ft.ListTile(
                    title=ft.Text(chat.get("title") or "…", max_lines=1),
                    subtitle=ft.Text(" · ".join(status)) if status else None,
                    trailing=_pill(t("unread", count=unread)) if unread else None,
                    on_click=self._opener(chat),
                )
            )
        listing = ft.ListView(tiles or [ft.Text(t("empty"))], expand=True, on_scroll=self._pulled(self.refresh_list))
        bar = ft.AppBar(
            title=ft.Text(t("conversations")), actions=[self._refresh_button(self.refresh_list), self._theme()]
        )
        self._screen(bar, listing)
        self.watching = asyncio.create_task(self._watch_list())

    async def _watch_list(self) -> None:
        """The list stays current: redrawn when an approval waits or is given, or a run ends."""
        try:
            async for event in self.client.alerts():
                seen = (event.get("conversation"), event.get("seq"))
                if seen in self.alerted:
                    continue  # each connect replays the questions still waiting
                self.alerted.add(seen)
                if event.get("type") in LIST_ALERTS:
                    self._errand(self.refresh_list())
                    return  # show_list starts a new watcher
        except Unpaired:
            await self._unpaired()

    async def refresh_list(self) -> None:
        await self.nav.redraw(LIST)

    async def _back(self, _: Any) -> None:
        """The app bar's ←: the list, as the browser's Back. Awaited: a lambda returning the coroutine left it
        never run, and the tap did nothing."""
        await self.nav.go(LIST)

    def _opener(self, chat: dict[str, Any]) -> Callable[[Any], Awaitable[None]]:
        async def open_chat(_: Any) -> None:
            await self.nav.go(chat_route(str(chat["id"])))

        return open_chat

    async def _show(self, route: str) -> str:
        """Draw what a route names (the Navigator's side); a chat no longer there shows the list."""
        wanted = chat_of(route)
        chat = next((c for c in self.listed if c.get("id") == wanted), None) if wanted else None
        if wanted and chat is None:  # made since the list was drawn (Forward, a typed address): ask again
            self.listed = await self._guarded(self.client.conversations()) or self.listed
            chat = next((c for c in self.listed if c.get("id") == wanted), None)
        if chat is None:
            await self._guarded(self.show_list())
            return LIST
        await self._guarded(self.show_chat(chat))
        return chat_route(wanted)

    # ---- one conversation ----
    async def show_chat(self, chat: dict[str, Any]) -> None:
        self._stop_watching()
        t = self.t
        conversation = str(chat["id"])
        self.members = [str(m) for m in chat.get("members") or []]
        self.current = chat
        payload = await self.client.messages(conversation, after=-1)
        await self.prefs.set(OPEN_KEY, conversation)
        self.chat = Transcript.from_history(payload)
        self.drawn = {}
        self.listing = ft.ListView(expand=True, spacing=8, auto_scroll=True, on_scroll=self._pulled(self.reload_chat))
        for item in self.chat.items:
            self._draw(item)
        self.floor = ft.Text(t("floor", name=chat.get("floor") or ""), size=12, visible=bool(self.members))
        self.stop_button = ft.IconButton(ft.Icons.STOP_CIRCLE, tooltip=t("stop"), on_click=self._stop)
        self.stop_button.visible = self.chat.running
        bar = ft.AppBar(
            leading=ft.IconButton(ft.Icons.ARROW_BACK, tooltip=t("back"), on_click=self._back),
            title=ft.Text(chat.get("title") or "…", max_lines=1),
            actions=[self.stop_button, self._refresh_button(self.reload_chat)],
        )
        self.mentions = ft.Row(wrap=True, spacing=4, visible=False)
        self.composer = ft.TextField(
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
        composer = ft.Row(
            [
                ft.IconButton(ft.Icons.ADD_PHOTO_ALTERNATE, tooltip=t("attach"), on_click=self._attach),
                self.composer,
                ft.IconButton(ft.Icons.SEND, tooltip=t("send"), on_click=self._send),
            ],
            vertical_alignment=ft.CrossAxisAlignment.END,
        )
        self._screen(bar, ft.Column([self.floor, self.listing, self.attached, self.mentions, composer], expand=True))
        # Plain tasks on the server's loop, not page.run_task: that one fails while the phone's socket is
        # down (no connection, no loop), which is exactly when events must keep being applied.
        self.watching = asyncio.create_task(self._watch(self.chat))

    async def reload_chat(self) -> None:
        if self.chat is not None:
            await self.nav.redraw(chat_route(self.chat.conversation))

    async def _watch(self, chat: Transcript) -> None:
        """The conversation live: catch-up after what the history held, then each event as it happens;
        the client reopens a dropped socket where it left off."""
        try:
            async for event in self.client.events(chat.conversation, chat.after):
                if self.chat is not chat:
                    return
                for item in chat.apply(event):
                    self.dirty[item.key] = item
                if chat.stale:  # an edit or another answer elsewhere: draw the history again, in a task of its
                    self._errand(self.reload_chat())  # own (redrawing stops this watcher: it froze here)
                    return
                self._schedule()
        except Unpaired:
            await self._unpaired()
        except MirrorRefused as e:
            self._say(self.t("error", reason=str(e)))

    def _schedule(self) -> None:
        if self.flush is None or self.flush.done():
            self.flush = asyncio.create_task(self._flush())

    async def _flush(self) -> None:
        await asyncio.sleep(REDRAW_EVERY)
        items, self.dirty = list(self.dirty.values()), {}
        for item in items:
            self._draw(item)
        if self.chat is not None:
            self.stop_button.visible = self.chat.running
            self.floor.value = self.t("floor", name=self.chat.floor) if self.chat.floor else self.floor.value
        self.page.update()

    # ---- drawing ----
    def _draw(self, item: Item) -> None:
        control = self._control(item)
        old = self.drawn.get(item.key)
        self.drawn[item.key] = control
        if old is None:
            self.listing.controls.append(control)
        else:
            self.listing.controls[self.listing.controls.index(old)] = control

    def _control(self, item: Item) -> ft.Control:
        t = self.t
        if isinstance(item, Question):
            return self._question(item)
        if isinstance(item, Marker) and item.kind == "remembered":
            return self._remembered(item)
        if isinstance(item, Marker):
            text = t("stopped") if item.kind == "stopped" else t(item.phrase, **item.args) if item.phrase else item.text
            color = ft.Colors.ERROR if item.kind == "error" else ft.Colors.ON_SURFACE_VARIANT
            return ft.Text(text, italic=True, color=color, text_align=ft.TextAlign.CENTER)
        mine = item.who == USER
        lines: list[ft.Control] = []
        if not mine:
            lines.append(
                ft.Text(t("assistant") if item.who == "assistant" else item.who, weight=ft.FontWeight.BOLD, size=12)
            )
        lines += [_with_icon(ft.Icons.BUILD_OUTLINED, tool, italic=True) for tool in item.tools[-5:]]
        lines += [_with_icon(ft.Icons.ATTACH_FILE, name) for name in item.files]
        if item.text:
            # Not selectable: Flutter hides selectable text from the accessibility tree (screen readers).
            lines.append(ft.Markdown(item.text, extension_set=ft.MarkdownExtensionSet.GITHUB_WEB))
        if item.streaming:  # a still marker: an animated bar keeps Flutter's accessibility tree from updating
            lines.append(ft.Text("…", size=12, color=ft.Colors.ON_SURFACE_VARIANT))
        if item.failed:
            lines.append(ft.Text(t("failed", reason=item.failed), color=ft.Colors.ERROR, size=12))
        return ft.Row(
            [
                ft.Container(
                    ft.Column(lines, spacing=4, tight=True),
                    padding=10,
                    border_radius=12,
                    bgcolor=ft.Colors.PRIMARY_CONTAINER if mine else ft.Colors.SURFACE_CONTAINER_HIGHEST,
                    expand=True,
                )
            ],
            alignment=ft.MainAxisAlignment.END if mine else ft.MainAxisAlignment.START,
        )

    def _remembered(self, item: Marker) -> ft.Control:
        """ "Remembered: …" with Undo: every memory write is seen, and can be taken back from here."""
        t = self.t
        words = t("forgot", entry=item.text) if item.removed else t("remembered", entry=item.text)
        said = ft.Text(words, italic=True, color=ft.Colors.ON_SURFACE_VARIANT, expand=True)
        if item.undone:
            return ft.Row([said, ft.Text(t("forgotten"), size=12)])

        async def forget() -> bool:
            await self.client.undo_memory(item.target, item.text, item.replaced, item.removed)
            return True

        async def undo(_: Any) -> None:
            if await self._guarded(forget()):
                item.undone = True
                self._draw(item)
                self.page.update()

        return ft.Row([said, ft.TextButton(t("undo"), on_click=undo)])

    def _question(self, question: Question) -> ft.Control:
        t = self.t
        body: list[ft.Control] = [
            ft.Text(t("approval", tool=question.tool), weight=ft.FontWeight.BOLD),
            ft.Text(question.preview, font_family="monospace", size=12),
        ]
        if question.declined:
            body.append(ft.Text(t(f"declined_{question.declined}"), italic=True))
        elif question.decision:
            answer = t("answered_deny") if question.decision == "deny" else t("answered_allow")
            body.append(ft.Text(t("answered_by", answer=answer, who=question.by or t("desktop")), italic=True))
        else:
            body.append(
                ft.Row(
                    [
                        ft.FilledButton(t("once"), on_click=self._answerer(question, "once")),
                        ft.OutlinedButton(t("run"), on_click=self._answerer(question, "run")),
                        ft.TextButton(t("deny"), on_click=self._answerer(question, "deny")),
                    ],
                    wrap=True,
                )
            )
        return ft.Card(ft.Container(ft.Column(body, tight=True, spacing=6), padding=12))

    def _answerer(self, question: Question, decision: str) -> Callable[[Any], Awaitable[None]]:
        async def answer(_: Any) -> None:
            await self._guarded(self.client.answer(question.conversation, question.key, decision))

        return answer

    # ---- acting ----
    async def _send(self, _: Any) -> None:
        text = (self.composer.value or "").strip()
        if not text or self.chat is None:
            return
        self.composer.value = ""
        self.mentions.visible = False
        files, self.pending = self.pending, []
        self.attached.visible = False
        self.page.update()
        await self._guarded(self.client.send(self.chat.conversation, text, files))

    async def _stop(self, _: Any) -> None:
        if self.chat is not None:
            await self._guarded(self.client.stop(self.chat.conversation))

    async def _attach(self, _: Any) -> None:
        """A photo or file goes up over HTTP to a URL this session signed (app.py), then on to the
        conversation through the API, like the desktop's attachments (same limits and rules)."""
        if self.chat is None:
            return
        picked = await self.picker.pick_files(allow_multiple=False)
        for chosen in picked or []:
            stored_as = secrets.token_hex(12)  # never the phone's own file name on this disk
            self.uploading[chosen.name] = (stored_as, self.chat.conversation)
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
        stored = await self._guarded(self.client.upload(conversation, event.file_name, data))
        if stored and self.chat is not None and self.chat.conversation == conversation:
            self.pending.append(str(stored["id"]))
            self.attached.value = self.t("attached", name=event.file_name)
            self.attached.visible = True
            self.page.update()

    def _suggest(self, _: Any) -> None:
        """`@` offers the group's members; a tap completes the name."""
        typed = MENTION.search(self.composer.value or "")
        names = [m for m in self.members if typed and m.lower().startswith(typed.group(1).lower())]
        self.mentions.controls = [ft.Chip(ft.Text(f"@{name}"), on_click=self._mentioner(name)) for name in names]
        self.mentions.visible = bool(names)
        self.page.update()

    def _mentioner(self, name: str) -> Callable[[Any], None]:
        def complete(_: Any) -> None:
            self.composer.value = MENTION.sub(f"@{name} ", self.composer.value or "")
            self.mentions.visible = False
            self.page.update()

        return complete

    # ---- helpers ----
    async def _guarded(self, work: Awaitable[Any]) -> Any:
        """Run a call to the mirror; a refused token goes back to pairing, a refusal is said, never lost."""
        try:
            return await work
        except Unpaired:
            await self._unpaired()
        except MirrorRefused as e:
            self._say(self.t("error", reason=str(e)))
        except OSError as e:
            self._say(self.t("error", reason=str(e) or type(e).__name__))
        return None

    def _say(self, text: str) -> None:
        self.page.show_dialog(ft.SnackBar(ft.Text(text)))

    def _screen(self, bar: ft.AppBar | None, body: ft.Control) -> None:
        self.page.appbar = bar
        self.page.controls = [ft.SafeArea(body, expand=True)]
        self.page.update()

    def _refresh_button(self, refresh: Callable[[], Awaitable[None]]) -> ft.IconButton:
        async def clicked(_: Any) -> None:
            await refresh()

        return ft.IconButton(ft.Icons.REFRESH, tooltip=self.t("refresh"), on_click=clicked)

    def _pulled(self, refresh: Callable[[], Awaitable[None]]) -> Callable[[ft.OnScrollEvent], Awaitable[None]]:
        """Pull to refresh: a drag far enough past the top of a list reloads it."""

        async def scrolled(event: ft.OnScrollEvent) -> None:
            if event.event_type == ft.ScrollType.OVERSCROLL and (event.overscroll or 0) < -PULL / 4:
                if event.pixels <= event.min_scroll_extent:
                    await refresh()

        return scrolled

    def _theme(self) -> ft.IconButton:
        async def toggle(_: Any) -> None:
            dark = self.page.theme_mode != ft.ThemeMode.DARK
            self.page.theme_mode = ft.ThemeMode.DARK if dark else ft.ThemeMode.LIGHT
            await self.prefs.set(THEME_KEY, "dark" if dark else "light")
            self.page.update()

        return ft.IconButton(ft.Icons.BRIGHTNESS_6, tooltip=self.t("theme"), on_click=toggle)

    def _errand(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self.errands.add(task)
        task.add_done_callback(self.errands.discard)

    def _stop_watching(self) -> None:
        self.chat = None
        if self.watching is not None:
            self.watching.cancel()
        self.watching = None

    async def _closed(self, _: Any) -> None:
        self._stop_watching()
        await self.client.close()


def _device_name(agent: str) -> str:
    """A name the person recognises in the device list: "iPhone", "Android phone", else "Phone"."""
    for marker, name in (("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android phone")):
        if marker in agent:
            return name
    return "Phone"


def _pill(text: str) -> ft.Control:
    return ft.Container(
        ft.Text(text, size=12, color=ft.Colors.ON_PRIMARY),
        bgcolor=ft.Colors.PRIMARY,
        border_radius=10,
        padding=ft.Padding(left=8, right=8, top=2, bottom=2),
    )


def _kept(_: Any) -> None:
    """A text field's change, already stored in its `value` by Flet."""


def _with_icon(icon: ft.IconData, text: str, *, italic: bool = False) -> ft.Control:
    """A tool call or a file in a bubble (icons, not emoji: the bundled fonts have none)."""
    return ft.Row([ft.Icon(icon, size=14), ft.Text(text, size=12, italic=italic, expand=True)], spacing=4)

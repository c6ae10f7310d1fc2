"""The phone view (Flet, web mode): pair, the conversation list (a new chat from there), one conversation live.

It holds no state of its own: everything it shows comes from the mirror's sync API (client.py) and is
drawn from a `Transcript`; the device token lives in the phone's browser storage and nowhere else on
this side. One session per phone tab, run by Flet in this process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import flet as ft

from orkas.phone.client import MirrorClient, MirrorRefused, Target, Unpaired
from orkas.phone.composer import Composer
from orkas.phone.device import device_name
from orkas.phone.drawing import Drawing, pill
from orkas.phone.earlier import PAGE, SPACING, EarlierPages
from orkas.phone.navigation import LIST, Navigator, chat_of, chat_route
from orkas.phone.rewind import RewindDialog
from orkas.phone.strings import Words, language
from orkas.phone.touch import icon_button, tall, theme
from orkas.phone.transcript import Bubble, File, Item, Marker, Question, Transcript

log = logging.getLogger(__name__)
TOKEN_KEY = "orkas.device_token"
LANG_KEY = "orkas.lang"  # written by index.html from navigator.languages before the app starts
THEME_KEY = "orkas.theme"
OPEN_KEY = "orkas.open"  # the conversation on screen, so a fresh page (or session) opens it again
LIST_ALERTS = ("permission_request", "permission_answered", "done", "error", "turn_end")
REDRAW_EVERY = 0.05  # seconds: streamed text is redrawn at most this often (a delta per frame would flood)
PULL = 60  # pixels pulled down past the top of the list to refresh it
PHOTO_MOST = 8 * 1024 * 1024  # bytes: a larger photo is named, not drawn (it would cross the session's socket)


def make_main(target: Target, uploads: Path) -> Callable[[ft.Page], Awaitable[None]]:
    async def main(page: ft.Page) -> None:
        await PhoneView(page, target, uploads).start()

    return main


class PhoneView:
    def __init__(self, page: ft.Page, target: Target, uploads: Path) -> None:
        self.page = page
        self.client = MirrorClient(target)
        self.prefs = ft.SharedPreferences()
        self.composer = Composer(page, self.client, uploads, self._guarded)
        self.t = Words("en")
        self.drawing = Drawing(self.t, self)
        self.watching: asyncio.Task[None] | None = None
        self.chat: Transcript | None = None
        self.earlier: EarlierPages | None = None  # the open chat's pages before those drawn
        self.drawn: dict[str, ft.Control] = {}
        self.dirty: dict[str, Item] = {}
        self.flush: asyncio.Task[None] | None = None
        self.errands: set[asyncio.Task[None]] = set()  # fire-and-forget work, held until done
        self.photos: dict[str, bytes | None] = {}  # attachment id -> its bytes (None: being fetched, or not shown)
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
        page.theme = theme()
        page.dark_theme = theme()
        saved_theme = await self.prefs.get(THEME_KEY)
        page.theme_mode = {"light": ft.ThemeMode.LIGHT, "dark": ft.ThemeMode.DARK}.get(
            str(saved_theme), ft.ThemeMode.SYSTEM
        )
        self.t = self.drawing.t = Words(language(str(await self.prefs.get(LANG_KEY) or "en").split(",")))
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
        named = device_name(self.page.client_user_agent or "", t)
        name_field = ft.TextField(label=t("device_name"), value=named, on_change=_kept)
        problem = ft.Text(note, color=ft.Colors.ERROR)

        async def pair(_: Any) -> None:
            try:
                token = await self.client.pair(code_field.value or "", name_field.value or named)
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
            tall(ft.FilledButton(t("pair"), on_click=pair)),
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
        chats, wanting = await asyncio.gather(self.client.conversations(), self.client.sign_ins())
        self.listed = chats
        await self.prefs.remove(OPEN_KEY)
        t = self.t
        tiles: list[ft.Control] = []
        for chat in chats:
            status = [t("waiting")] if chat.get("waiting") else []
            status += [t("running")] if chat.get("running") else []
            if chat.get("floor") not in (None, "commander"):  # a member answers every message
                status.append(t("floor", name=chat["floor"]))
            elif chat.get("members"):
                status.append(t("group", names=", ".join(chat["members"])))
            unread = int(chat.get("unread") or 0)
            tiles.append(
                ft.ListTile(
                    title=ft.Text(chat.get("title") or "…", max_lines=1, overflow=ft.TextOverflow.ELLIPSIS),
                    subtitle=ft.Text(" · ".join(status)) if status else None,
                    trailing=pill(t("unread", count=unread)) if unread else None,
                    on_click=self._opener(chat),
                )
            )
        notes: list[ft.Control] = [  # a connector that needs the person: said over the list, where it is seen
            ft.Container(
                ft.Text(t("sign_in_again" if item["again"] else "sign_in", name=item["name"])),
                padding=12,
                bgcolor=ft.Colors.ERROR_CONTAINER,
                border_radius=8,
            )
            for item in wanting
        ]
        listing = ft.ListView(
            [*notes, *(tiles or [ft.Text(t("empty"))])], expand=True, on_scroll=self._pulled(self.refresh_list)
        )
        bar = ft.AppBar(
            title=ft.Text(t("conversations")), actions=[self._refresh_button(self.refresh_list), self._theme()]
        )
        new = ft.FloatingActionButton(icon=ft.Icons.ADD, content=t("new_chat"), on_click=self._new_chat)
        self._screen(bar, listing, new)
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

    async def _new_chat(self, _: Any) -> None:
        """A blank chat, as on the desktop: made when its first message is sent, so one left empty leaves nothing
        behind, here or on the computer. No route of its own: Back and a reload go to the list."""
        await self._guarded(self.show_chat({"id": ""}))

    async def _begin(self) -> str:
        """The blank chat's first message (or photo) makes it; it then opens as any chat, at its route, live."""
        made = await self._guarded(self.client.create())
        if not made:
            return ""
        self.listed = [made, *self.listed]
        self._errand(self.nav.go(chat_route(str(made["id"]))))  # runs once the message is on its way
        return str(made["id"])

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
        self.current = chat
        payload = await self.client.messages(conversation, after=-1, limit=PAGE) if conversation else {"id": ""}
        await self.prefs.set(OPEN_KEY, conversation)
        self.chat = Transcript.from_history(payload)
        self.drawn = {}
        self.earlier = EarlierPages(self, self.chat, str(payload.get("older") or ""))
        self.listing = ft.ListView(
            self.earlier.controls(),
            expand=True,
            spacing=SPACING,
            auto_scroll=True,
            # A jump, not Flet's default one-second glide: opening a chat glided from its first drawn message
            # to its last (3.6–4.3 s on the bench, more as the glide chased the list's growing length), and a
            # streamed answer is followed more closely so.
            auto_scroll_animation=0,
            on_scroll=self._chat_scrolled,
        )
        for item in self.chat.items:
            self._draw(item)
        members = [str(m) for m in chat.get("members") or []]
        self.chat.floor = self.chat.floor or str(chat.get("floor") or "")  # the list's, until an event says
        self.floor = ft.Text(t("floor", name=self.chat.talking_to), size=12, visible=bool(self.chat.talking_to))
        self.title = ft.Text(self.chat.title or chat.get("title") or t("untitled"), max_lines=1)
        bar = ft.AppBar(
            leading=icon_button(ft.Icons.ARROW_BACK, t("back"), self._back),
            title=self.title,
            actions=[self._refresh_button(self.reload_chat)],
        )
        bottom = self.composer.build(t, conversation, members, self.chat.running, None if conversation else self._begin)
        self._screen(bar, ft.Column([self.floor, self.listing, bottom], expand=True))
        # Plain tasks on the server's loop, not page.run_task: that one fails while the phone's socket is
        # down (no connection, no loop), which is exactly when events must keep being applied.
        self.watching = asyncio.create_task(self._watch(self.chat)) if conversation else None

    async def _chat_scrolled(self, event: ft.OnScrollEvent) -> None:
        """Up to the top: the page before (or, with none left, a pull reloads); back at the bottom: the list
        follows what comes in again."""
        if self.earlier is not None and await self.earlier.scrolled(event):
            return
        if not self.listing.auto_scroll and event.pixels >= event.max_scroll_extent - 8:
            self.listing.auto_scroll = True
            self.listing.update()
        await self._pulled(self.reload_chat)(event)

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
            self.composer.running(self.chat.running)
            holder = self.chat.talking_to
            self.floor.value, self.floor.visible = self.t("floor", name=holder), bool(holder)
            self.title.value = self.chat.title or self.title.value
        self.page.update()

    def _draw(self, item: Item) -> None:
        control = self.drawing.control(item)
        old = self.drawn.get(item.key)
        self.drawn[item.key] = control
        if old is None:
            self.listing.controls.append(control)
        elif old in self.listing.controls:
            self.listing.controls[self.listing.controls.index(old)] = control
        elif self.earlier is not None:
            self.earlier.replace(old, control)

    def _redraw(self, item: Item) -> None:
        if self.chat is not None and item.key in self.drawn:
            self._draw(item)
            self.page.update()

    # ---- what the transcript's controls do (drawing.Acts) ----
    async def answer(self, question: Question, decision: str) -> None:
        first = await self._guarded(self.client.answer(question.conversation, question.key, decision))
        if first:  # too late: said in the phone's language, and the card shows the answer that counted
            question.decision, question.by = str(first.get("decision", "")), str(first.get("by", ""))
            said = self.t("answered_deny") if question.decision == "deny" else self.t("answered_allow")
            self._say(self.t("too_late", answer=said, who=question.by or self.t("desktop")))
            self._redraw(question)

    async def undo(self, marker: Marker) -> None:
        async def forget() -> bool:
            await self.client.undo_memory(marker.target, marker.text, marker.replaced, marker.removed)
            return True

        if await self._guarded(forget()):
            marker.undone = True
            self._redraw(marker)

    async def retry(self, item: Bubble | Marker) -> None:
        """Answer the person's message again; the failed try stays on the computer as the other version."""
        if self.chat is not None and item.retry:
            await self._guarded(self.client.retry(self.chat.conversation, item.retry))

    async def rewind(self, item: Bubble) -> None:
        if self.chat is not None:  # previewed and confirmed in its dialog (rewind.py)
            dialog = RewindDialog(self.page, self.t, self.client, self._guarded, self._say)
            await dialog.offer(self.chat.conversation, item.key, self.chat.group)

    def thumbnail(self, file: File, item: Item) -> bytes | None:
        if file.id not in self.photos and self.chat is not None:
            self.photos[file.id] = None
            self._errand(self._fetch_photo(self.chat.conversation, file, item))
        return self.photos[file.id]

    async def _fetch_photo(self, conversation: str, file: File, item: Item) -> None:
        try:
            data = await self.client.image(conversation, file.id)
        except (MirrorRefused, Unpaired):
            return  # gone since (the file was removed): its name still shows, as on the desktop
        if len(data) <= PHOTO_MOST:
            self.photos[file.id] = data
            self._redraw(item)

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

    def _screen(self, bar: ft.AppBar | None, body: ft.Control, action: ft.FloatingActionButton | None = None) -> None:
        self.page.appbar = bar
        self.page.floating_action_button = action
        self.page.controls = [ft.SafeArea(body, expand=True)]
        self.page.update()

    def _refresh_button(self, refresh: Callable[[], Awaitable[None]]) -> ft.IconButton:
        async def clicked(_: Any) -> None:
            await refresh()

        return icon_button(ft.Icons.REFRESH, self.t("refresh"), clicked)

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

        return icon_button(ft.Icons.BRIGHTNESS_6, self.t("theme"), toggle)

    def _errand(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self.errands.add(task)
        task.add_done_callback(self.errands.discard)

    def _stop_watching(self) -> None:
        self.chat = None
        self.composer.leave()
        if self.watching is not None:
            self.watching.cancel()
        self.watching = None

    async def _closed(self, _: Any) -> None:
        self._stop_watching()
        await self.client.close()


def _kept(_: Any) -> None:
    """A text field's change, already stored in its `value` by Flet."""

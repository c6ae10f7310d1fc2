"""What the phone draws for one conversation, rebuilt from the mirror's history and its live events.

Plain data, no Flet: the view (view.py) turns items into controls and redraws only the ones `apply`
says changed. The shapes are the desktop's (history_payload, product events); a group's agents each get
their own bubble, named, as on the desktop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ASSISTANT = "assistant"  # Orkas's own words: a one-agent chat's answers, and a group's commander's
ASKS = frozenset({"dispatch_to", "hand_off_to"})  # Orkas asking a member: its own card, never a tool line (chat.js)
COMMANDER = "commander"  # a group's coordinator on the wire; to a person it is Orkas (as on the desktop)
USER = "user"
TOOL_LINE = 120  # characters of a tool call's input shown under its name
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})  # what the mirror shows inline


@dataclass(frozen=True)
class File:
    """A file the person attached: named in the bubble; an image the conversation holds is also a thumbnail."""

    name: str
    id: str = ""  # the conversation's attachment, by which its image is fetched
    media_type: str = ""

    @property
    def image(self) -> bool:
        return bool(self.id) and self.media_type in IMAGE_TYPES


@dataclass
class Bubble:
    key: str
    who: str  # "user", "assistant" (Orkas, the commander too), or a group agent's name
    text: str = ""
    tools: list[str] = field(default_factory=list)
    files: list[File] = field(default_factory=list)
    streaming: bool = False
    failed: str = ""  # why the turn failed, when it did
    failed_phrase: str = ""  # the phone's own words for it, when it has them (a spending limit reached)
    retry: str = ""  # the person's message a Retry answers again (on the latest failure only)
    _tools_said: int = 0  # how many tool calls the text had been written after

    def say(self, text: str) -> None:
        """Text to the bubble; after a tool call, on a paragraph of its own ("Asking ghost.Done." ran together)."""
        if text.strip() and self.text and len(self.tools) > self._tools_said:
            self.text, text = self.text.rstrip() + "\n\n", text.lstrip()
        if text.strip():
            self._tools_said = len(self.tools)
        self.text += text


@dataclass
class Question:
    """A permission request: the phone answers once / run / deny ("always" stays a desktop decision)."""

    key: str
    conversation: str
    tool: str
    preview: str
    level: str  # read_only | workspace_write | runs_program | dangerous: the risk, said on the card
    categories: tuple[str, ...] = ()  # what it does (deletes files, network…), as the desktop's card lists them
    effect: str = ""  # what approving grants beyond the sandbox: "" | network | unconfined
    decision: str = ""  # allow_once | allow_run | always | deny, once answered (by anyone)
    by: str = ""  # "" = the desktop, else the phone (or `orkas run`) that answered
    declined: str = ""  # "expired" | "unattended" | "stopped": a no nobody gave, said as such


@dataclass
class Marker:
    key: str
    kind: str  # stopped | error | notice | remembered
    text: str
    target: str = ""  # remembered: the memory it went to (profile, notes), for its Undo
    replaced: str | None = None  # remembered: the entry it replaced (Undo puts it back)
    removed: bool = False  # remembered: a removal ("Forgot: …"; Undo keeps it again)
    undone: bool = False
    phrase: str = ""  # a string of the phone's (strings.py) the view says in the person's language, with `args`
    args: dict[str, Any] = field(default_factory=dict)
    retry: str = ""  # error: the person's message a Retry answers again (on the latest failure only)


Item = Bubble | Question | Marker

# What the phone leaves to the desktop on purpose (every other wire type has an `_on_<type>` below).
IGNORED = {
    "run_start": "a bubble opens with the first words",
    "thinking_delta": "the phone shows answers; the reasoning stays on the desktop",
    "tool_progress": "the call's line is shown; its progress is the desktop's detail",
    "usage": "costs are shown on the desktop",
    "steer_applied": "the message was drawn when it was queued",
    "queued_applied": "the queued bubbles already show the words",
    "unsent_discarded": "the not-sent line stays as a record of what happened",
    "instructions": "the desktop's header says which instruction files are in force and asks about trust",
}


@dataclass
class Transcript:
    conversation: str
    items: list[Item] = field(default_factory=list)
    after: int = -1  # the last event applied: the socket resumes after it
    running: bool = False
    floor: str = ""
    title: str = ""
    stale: bool = False  # the history changed (an edit, another answer): the view reads it again
    group: bool = False  # a group's turn is not retried from here (nor on the desktop)
    _asked: str = ""  # the person's latest message: what Retry answers again
    _stopped: bool = False  # history: the group turn being read was stopped (said once, after it)
    _failed: Bubble | Marker | None = None  # the failure that offers Retry now
    _open: dict[str, Bubble] = field(default_factory=dict)  # the bubble each actor is writing into
    _index: dict[str, Item] = field(default_factory=dict)
    _memory_calls: dict[str, dict[str, Any]] = field(default_factory=dict)  # history: memory writes awaiting results

    # ---- history ----
    @classmethod
    def from_history(cls, payload: dict[str, Any]) -> Transcript:
        chat = cls(conversation=str(payload.get("id", "")), after=int(payload.get("after", -1)))
        chat.running = bool(payload.get("running"))
        chat.title = str(payload.get("title") or "")
        chat.group = payload.get("group") is not None
        if chat.group:
            for record in payload["group"]:
                chat._group_record(record)
            chat._group_turn_end()
        else:
            for message in payload.get("messages", []):
                chat._message(message)
        for event in payload.get("events", []):
            chat.apply(event)
        return chat

    def _add(self, item: Item) -> Item:
        self.items.append(item)
        self._index[item.key] = item
        return item

    def _message(self, message: dict[str, Any]) -> None:
        role = message.get("role")
        blocks = message.get("content", [])
        if role == "user":
            for block in blocks:  # a memory write that worked: "Remembered: …", with Undo for an added entry
                given = self._memory_calls.pop(str(block.get("tool_use_id", "")), None)
                if block.get("type") == "tool_result" and given is not None and not block.get("is_error"):
                    self._remembered(f"m-{block['tool_use_id']}", given)
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            files = _files([b for b in blocks if b.get("type") == "attachment"])
            if text.strip() or files:  # tool results travel as user messages: not the person's words
                self._asked = str(message["id"])
                self._withdraw_retry()
                self._add(Bubble(key=message["id"], who=USER, text=text, files=files))
            return
        if role == "assistant":
            last = self.items[-1] if self.items else None
            bubble = last if isinstance(last, Bubble) and last.who == ASSISTANT else None
            if bubble is None:
                bubble = Bubble(key=message["id"], who=ASSISTANT)
                self._add(bubble)
            for block in blocks:
                if block.get("type") == "text":
                    bubble.say(block.get("text", ""))
                elif block.get("type") == "tool_use":
                    bubble.tools.append(_tool_line(block.get("name", ""), block.get("summary", "")))
                    given = block.get("input", {})
                    if block.get("name") == "memory" and isinstance(given, dict) and given.get("action") == "add":
                        self._memory_calls[str(block.get("id", ""))] = {
                            "target": given.get("target", "notes"),
                            "entry": given.get("text", ""),
                        }
            return
        if role == "app" and message.get("kind") == "approval":  # asked and answered: the card as it was left
            self._add(self._answered(message.get("detail") or {}, message.get("text", ""), message["id"]))
            return
        if role == "app" and message.get("kind") in ("stopped", "error"):
            marker = Marker(key=message["id"], kind=message["kind"], text=message.get("text", ""))
            detail = message.get("detail") or {}
            marker.phrase = _limit_phrase(detail.get("error"), detail.get("cause"))
            self._add(marker)
            if marker.kind == "error":
                self._offer_retry(marker)

    def _answered(self, facts: dict[str, Any], preview: str, key: str) -> Question:
        return Question(
            key=str(facts.get("question") or key),
            conversation=self.conversation,
            tool=str(facts.get("tool", "")),
            preview=preview,
            level=str(facts.get("level", "")),
            categories=tuple(str(facts.get("categories") or "").split()),
            effect=str(facts.get("effect") or ""),
            decision=str(facts.get("decision", "")),
            by=str(facts.get("by", "")),
            declined=str(facts.get("closed") or ""),
        )

    def _group_record(self, record: dict[str, Any]) -> None:
        sender = str(record.get("from", ""))
        if record.get("dispatch"):
            self._add(_asked(str(record["id"]), record))
            return
        if sender == USER:
            self._group_turn_end()
        # A Stop ends every actor's run: each record says so, but the person stopped one turn (said once, after
        # it, as the desktop does); the commander's empty segment a Stop leaves is no bubble at all.
        self._stopped |= bool(record.get("stopped"))
        files = _files(record.get("attachments", []))
        steps = record.get("process", [])
        tools = [_tool_line(p["tool"], p.get("summary", "")) for p in steps if p.get("tool") and p["tool"] not in ASKS]
        if sender != USER and not (record.get("text") or tools or files or record.get("failure")):
            return
        who = USER if sender == USER else ASSISTANT if sender == COMMANDER else sender
        text = str(record.get("text", ""))
        asked = [(i, s) for i, s in enumerate(steps) if isinstance(s.get("approval"), dict)]
        if asked:  # as live: what it said and its calls, the questions they asked as answered, then what came after
            first = asked[0][1].get("at")
            cut = min(first, len(text)) if isinstance(first, int) else 0  # a record from before `at`: no words first
            self._add(Bubble(key=f"{record['id']}:calls", who=who, text=text[:cut].strip(), files=files, tools=tools))
            for i, step in asked:
                facts = step["approval"]
                self._add(self._answered(facts, str(facts.get("preview", "")), f"{record['id']}:{i}"))
            files, tools, text = [], [], text[cut:].strip()
            if not (text or record.get("failure")):
                return
        bubble = Bubble(key=record["id"], who=who, text=text, files=files, tools=tools)
        bubble.failed = record.get("failure") or ""
        said = record.get("extra") or {}
        bubble.failed_phrase = _limit_phrase(said.get("error"), said.get("cause")) if bubble.failed else ""
        self._add(bubble)

    def _group_turn_end(self) -> None:
        if self._stopped:  # the person's Stop: said as such, not in red
            self._add(Marker(key=f"s-{len(self.items)}", kind="stopped", text=""))
        self._stopped = False

    @property
    def talking_to(self) -> str:
        """The member holding a group's floor, or "" while Orkas (the commander) does: only then is it said."""
        return "" if self.floor in ("", COMMANDER) else self.floor

    # ---- live ----
    def apply(self, event: dict[str, Any]) -> list[Item]:
        """Apply one product event; the items it changed (new ones included), for the view to redraw. Each type
        the wire carries has an `_on_<type>` here or is in IGNORED, with why (tests/phone checks both)."""
        seq = event.get("seq")
        if isinstance(seq, int):
            if seq <= self.after:
                return []  # already drawn (catch-up overlaps what the history held)
            self.after = seq
        handler = getattr(self, f"_on_{event.get('type')}", None)
        if handler is None:
            return []
        actor = event.get("actor") or ASSISTANT
        changed: list[Item] = handler(event, ASSISTANT if actor in ("group", COMMANDER) else actor, seq)
        return changed

    def _on_user_message(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        self.running = True
        self._open.clear()
        self._asked = str(event.get("message_id", ""))
        withdrawn = self._withdraw_retry()
        if event.get("message_id") in self._index:  # a queued message becoming the turn's: drawn already
            return withdrawn
        files = _files(event.get("attachments", []))
        said = Bubble(key=event["message_id"], who=USER, text=event.get("text", ""), files=files)
        return [*withdrawn, self._add(said)]

    def _on_message_queued(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        files = _files(event.get("attachments", []))
        return [self._add(Bubble(key=event["message_id"], who=USER, text=event.get("text", ""), files=files))]

    def _on_queued_dropped(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        return [self._add(Marker(key=f"q{seq}", kind="notice", text="", phrase="queuedDropped"))]

    def _on_message_not_sent(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        reason = str(event.get("reason", ""))
        self.running = False
        return [self._add(Marker(key=f"n{seq}", kind="error", text=reason, phrase="notSent", args={"reason": reason}))]

    def _on_history_changed(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        self.stale = True  # an edit or another answer: the view reads the history again
        return []

    def _on_text_delta(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        ended = self._yield_to(actor)
        bubble = self._bubble(actor, event)
        bubble.say(event.get("text", ""))
        return [*ended, bubble]

    def _on_tool_start(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        if actor == ASSISTANT and self.group and event.get("name") in ASKS:
            return []  # asking a member is drawn as its own card ("Asked critic: …"), as on the desktop
        ended = self._yield_to(actor)
        bubble = self._bubble(actor, event)
        bubble.tools.append(_tool_line(event.get("name", ""), event.get("summary", "")))
        return [*ended, bubble]

    def _on_tool_end(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        if event.get("name") != "memory" or event.get("is_error"):
            return []  # the call's line is drawn; its result is the desktop's to show
        details = event.get("details") or {}
        if details.get("entry") and details.get("action") in ("add", "replace"):
            return [self._remembered(f"m{seq}", details)]
        if details.get("action") == "remove" and details.get("removed"):
            return [self._remembered(f"m{seq}", {**details, "entry": details["removed"], "removed": True})]
        return []

    def _on_permission_request(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        ending = self._open.pop(actor) if actor in self._open else None
        if ending is not None:  # what the agent says after the answer goes below the card
            ending.streaming = False
        question = Question(
            key=event["id"],
            conversation=self.conversation,
            tool=event.get("tool", ""),
            preview=event.get("preview", ""),
            level=event.get("level", ""),
            categories=tuple(str(c) for c in event.get("categories", ())),
            effect=str(event.get("effect") or ""),
        )
        return [*([ending] if ending else []), self._add(question)]

    def _on_permission_answered(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        found = self._index.get(event.get("question_id", ""))
        if isinstance(found, Question):
            found.decision, found.by = event.get("decision", ""), event.get("by", "")
            found.declined = next((why for why in ("expired", "unattended", "stopped") if event.get(why)), "")
            return [found]
        return []

    def _on_done(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        ending = self._open.pop(actor) if actor in self._open else None
        if ending is None:
            return []
        ending.streaming = False
        return [ending]

    def _on_error(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        if event.get("kind") == "aborted" and self.group:  # every actor's run ends: said once, at the turn's end
            return self._on_done(event, actor, seq)
        if event.get("kind") == "aborted":
            return [*self._close_all(), self._add(Marker(key=f"s{seq}", kind="stopped", text=""))]
        ending = self._open.pop(actor) if actor in self._open else None
        failed: Bubble | Marker
        if ending is None:
            failed = Marker(key=f"e{seq}", kind="error", text=event.get("message", ""))
            failed.phrase = _limit_phrase(event.get("kind"), event.get("cause"))
            self._add(failed)
        else:
            ending.streaming = False
            ending.failed = event.get("message", "")
            ending.failed_phrase = _limit_phrase(event.get("kind"), event.get("cause"))
            failed = ending
        self._offer_retry(failed)
        return [failed]

    def _on_idle(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        self.running = False
        # An untitled chat is named by its first words as its first message is sent (the store's rule, with no
        # event of its own; a model's title comes as `title_changed`): read again with its title.
        self.stale = self.stale or not self.title
        return self._close_all()

    def _on_turn_end(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        self.floor = str(event.get("floor") or self.floor)
        stopped = [self._add(Marker(key=f"s{seq}", kind="stopped", text=""))] if event.get("aborted") else []
        return [*self._on_idle(event, actor, seq), *stopped]

    def _on_group_start(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        self.floor = str(event.get("floor") or self.floor)
        self.group = True  # members added since the history was read: a Stop is said at the turn's end
        return []

    def _on_state_changed(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        self.floor = str(event.get("floor", ""))
        return []

    def _on_group_message(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        message = event.get("message") or {}
        if not message.get("dispatch"):
            return []  # the words streamed in live already, in the agent's own bubble
        return [self._add(_asked(str(message.get("id") or f"d{seq}"), message))]

    def _on_title_changed(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        self.title = str(event.get("title", ""))
        return []

    def _on_unknown_mentions(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        names = ", ".join(f"@{n}" for n in event.get("names", []))
        to = str(event.get("delivered_to", ""))
        return [
            self._add(
                Marker(key=f"u{seq}", kind="notice", text=names, phrase="unknownNames", args={"names": names, "to": to})
            )
        ]

    def _on_retry(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        reason = str(event.get("reason", ""))
        return [
            self._add(Marker(key=f"r{seq}", kind="notice", text=reason, phrase="retrying", args={"reason": reason}))
        ]

    def _on_compaction(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        return [self._add(Marker(key=f"c{seq}", kind="notice", text="", phrase="compacted"))]

    def _on_loop_warning(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        args = {"name": str(event.get("name", "")), "count": int(event.get("count", 0))}
        return [self._add(Marker(key=f"l{seq}", kind="notice", text="", phrase="repeating", args=args))]

    def _on_warning(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        return [self._add(Marker(key=f"w{seq}", kind="notice", text=str(event.get("message", ""))))]

    def _on_provider_fallback(self, event: dict[str, Any], actor: str, seq: Any) -> list[Item]:
        return [self._add(Marker(key=f"f{seq}", kind="notice", text=str(event.get("message", ""))))]

    def _remembered(self, key: str, details: dict[str, Any]) -> Marker:
        """A line the person sees whenever memory changed: what was kept, and an Undo."""
        marker = Marker(
            key=key,
            kind="remembered",
            text=str(details.get("entry", "")),
            target=str(details.get("target", "notes")),
            replaced=details.get("replaced") or None,
            removed=details.get("removed") is True,
        )
        self._add(marker)
        return marker

    def _offer_retry(self, failed: Bubble | Marker) -> None:
        """The latest failure offers Retry of the person's message before it (one agent only, as on the desktop)."""
        if self._asked and not self.group:
            self._withdraw_retry()
            failed.retry, self._failed = self._asked, failed

    def _withdraw_retry(self) -> list[Item]:
        """A newer message or failure: the older failure's Retry goes (it would answer an old message again)."""
        failed, self._failed = self._failed, None
        if failed is None:
            return []
        failed.retry = ""
        return [failed]

    def _yield_to(self, actor: str) -> list[Item]:
        """A member starting its bubble ends Orkas's open one: what Orkas says after the member's answer goes below it,
        as on the desktop and after a reload (it streamed into the bubble above the member's)."""
        if actor == ASSISTANT or actor in self._open or ASSISTANT not in self._open:
            return []
        ending = self._open.pop(ASSISTANT)
        ending.streaming = False
        return [ending]

    def _bubble(self, actor: str, event: dict[str, Any]) -> Bubble:
        bubble = self._open.get(actor)
        if bubble is None:
            self.running = True
            bubble = Bubble(key=f"live-{actor}-{event.get('seq')}", who=actor, streaming=True)
            self._open[actor] = bubble
            self._add(bubble)
        return bubble

    def _close_all(self) -> list[Item]:
        closed: list[Item] = []
        for bubble in self._open.values():
            bubble.streaming = False
            closed.append(bubble)
        self._open.clear()
        return closed

    def waiting(self) -> list[Question]:
        return [q for q in self.items if isinstance(q, Question) and not q.decision]


def _limit_phrase(kind: Any, cause: Any) -> str:
    """A spending limit reached, in the phone's words (the engine's sentence names a terminal command)."""
    return f"limit_{cause}" if kind == "budget" and cause in ("per_day", "per_month", "per_conversation") else ""


def _files(shown: list[dict[str, Any]]) -> list[File]:
    """Attachments as the history and the events show them (name, id, media type)."""
    return [File(str(a.get("name", "")), str(a.get("id") or ""), str(a.get("media_type") or "")) for a in shown]


def _tool_line(name: str, summary: str) -> str:
    """A tool call in one line: its name and the summary the tool itself gave (the command, the path)."""
    return f"{name}: {summary[:TOOL_LINE]}" if summary else name


ASKED_CHARS = 200  # of what the commander asked: the gist on a phone; the whole is in the member's answer


def _asked(key: str, message: dict[str, Any]) -> Marker:
    """The commander asked members (a dispatch): said in words, as the window and the terminal say it."""
    to, said = ", ".join(message.get("to", [])), " ".join(str(message.get("dispatch", "")).split())
    said = said if len(said) <= ASKED_CHARS else said[: ASKED_CHARS - 1] + "…"
    return Marker(key=key, kind="notice", text=said, phrase="asked", args={"to": to, "said": said})

"""One message of the person's through the group: routing, the commander's run and its segments, each
member's and worker's run as a child of the turn, hand-back, the task log, and outside text travelling
with what was made from it. `Group.send` (group.py) starts one; its tools (tools.py) call back into it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import AsyncGenerator, Callable, Coroutine, Sequence
from contextlib import aclosing, suppress
from pathlib import Path
from typing import Any, Literal, Protocol

from orkas.adapter.conversations.sessions import PersistentSession
from orkas.engine.abort import AbortSignal
from orkas.engine.budget import Budget
from orkas.engine.consent import Permissions
from orkas.engine.events import Done, Error, Event, PermissionRequest, TextDelta, ToolEnd, ToolStart
from orkas.engine.messages import TextBlock, Usage
from orkas.engine.runner import Agent
from orkas.engine.session import InMemorySession
from orkas.engine.steer import SteerQueue
from orkas.engine.tools.base import Tool, ToolContext
from orkas.engine.tools.untrusted import marked, note, outside_source, sources_read, wrap
from orkas.team.agents import AgentSpec, AgentStore
from orkas.team.bus import COMMANDER, USER, Bus, GroupMessage, render_for
from orkas.team.events import ActorEvent, MessagePosted, StateChanged, TeamEvent, TurnEnd, UnknownMentions
from orkas.team.handback import StreamScrub, parse_handback
from orkas.team.state import StateStore, Task
from orkas.team.tools import CreateAgent, DispatchTo, HandOffTo, RunWorker

log = logging.getLogger(__name__)

MENTION = re.compile(r"(?<![\w@.])@([a-z0-9][a-z0-9_-]{0,31})\b")
GROUP = "group"  # the actor of the group's own events
TEAM_TOOLS = frozenset({"dispatch_to", "run_worker", "hand_off_to", "create_agent"})
ASKS = frozenset({"dispatch_to", "hand_off_to"})  # asking a member: an ask that failed is said on the bubble
PARAGRAPH = "\n\n"


def parse_mentions(text: str, members: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(members and `commander` addressed with @, other @names nobody answers to), each once, in order."""
    known: list[str] = []
    unknown: list[str] = []
    for name in MENTION.findall(text):
        target = known if name in members or name == COMMANDER else unknown
        if name not in target:
            target.append(name)
    return tuple(known), tuple(unknown)


class Worktrees(Protocol):
    """Git worktrees for agents that write in their own (`worktree: true`), made by the composition root
    through the sandbox executor (every process goes through it)."""

    async def prepare(self, agent: str) -> Path | None:
        """The agent's worktree, made on first use; None when the workspace is not a git repository."""
        ...

    async def diff(self, worktree: Path) -> str:
        """What the agent changed there, for the commander."""
        ...


class Room(Protocol):
    """What a turn needs of its group (group.py's `Group`): who is in it, its bus and state, the agents."""

    agents: dict[str, AgentSpec]
    agent_store: AgentStore | None
    bus: Bus
    store: StateStore
    dispatch_cap: int
    interrupted: list[Task]
    worktrees: Worktrees | None

    @property
    def members(self) -> list[str]: ...

    def set_members(self, names: Sequence[str]) -> None: ...

    def session(self, actor: str) -> PersistentSession: ...

    def agent(
        self, spec: AgentSpec | None, tools: Sequence[Tool], note: str, workspace: Path | None = None
    ) -> Agent: ...


Answered = Callable[[PermissionRequest], dict[str, str | int] | None]  # a question's answer, as views draw it


class Turn:
    """One message of the person's, through the group. Implements `tools.Dispatcher`."""

    def __init__(
        self,
        group: Room,
        signal: AbortSignal,
        steer: SteerQueue,
        permissions: Permissions | None,
        budget: Budget | None,
        answered: Answered | None = None,
    ) -> None:
        self.group = group
        self.signal = signal
        self.steer = steer
        self.permissions = permissions
        self.budget = budget
        self.answered = answered
        self.asked: dict[str, PermissionRequest] = {}  # by the tool call that asked, until that call ends
        self.summaries: dict[str, str] = {}  # each call's one line, by its id, until it ends
        self.id = uuid.uuid4().hex
        self.out: asyncio.Queue[ActorEvent | None] = asyncio.Queue()
        self.dispatch_slots = asyncio.Semaphore(group.dispatch_cap)
        self.seg = 0
        self.pending: list[str] = []  # the commander's text since its last segment was posted
        self.trail: list[dict[str, Any]] = []  # the commander's tool trail for that segment
        self.tasks: list[Task] = []
        self.workers = 0
        self.children: set[asyncio.Future[_Outcome]] = set()
        self.worktrees: dict[str, Path] = {}  # members that worked in their own git worktree this turn

    # ---- the turn ----
    async def run(
        self, text: str, attachments: Sequence[dict[str, Any]], message_id: str | None = None
    ) -> AsyncGenerator[ActorEvent, None]:
        """`message_id`: the person's message's own id (its checkpoint is kept under it), else a new one."""
        state = self.group.store.state
        mentioned, unknown = parse_mentions(text, state.members)
        if COMMANDER in mentioned:
            targets: tuple[str, ...] = (COMMANDER,)
            if state.floor != COMMANDER:  # the person addressed the commander: the floor comes back
                state.floor, state.floor_source = COMMANDER, "user_selection"
        else:
            targets = mentioned or (state.floor,)
        posted = self.group.bus.post(
            USER,
            text,
            to=targets,
            mentions=mentioned,
            unknown_mentions=unknown,
            turn_id=self.id,
            attachments=tuple(attachments),
            id=message_id,
        )
        yield ActorEvent(GROUP, MessagePosted(message=posted.record()))
        if unknown:
            yield ActorEvent(GROUP, UnknownMentions(names=unknown, delivered_to=",".join(targets)))
        state.running = True
        self.group.store.save()
        driver = asyncio.create_task(self._drive(targets))
        try:
            while (item := await self.out.get()) is not None:
                yield item
        finally:
            if not driver.done():  # our reader went away mid-turn: nobody is left to see the rest
                self.signal.abort("the conversation was closed")
            with suppress(asyncio.CancelledError):
                await driver
            state.running = False
            self.group.store.save()

    async def _drive(self, targets: tuple[str, ...]) -> None:
        ok, message = False, ""
        try:
            if targets == (COMMANDER,):
                ok = await self._commander()
            else:
                ok = await self._to_members(targets)
        except Exception as e:  # a bug must end the turn with a reason, not hang the reader
            log.exception("group turn %s failed", self.id)
            message = f"internal error: {type(e).__name__}: {e}"
        finally:
            if self.children:  # members still finishing after a stop: their last events belong to this turn
                await asyncio.gather(*self.children, return_exceptions=True)
            for task in self.tasks:
                if task.status == "open" and self.signal.aborted:
                    self.group.store.finish(task, "cancelled", self.signal.reason)
            state = self.group.store.state
            self.emit(
                GROUP,
                StateChanged(floor=state.floor, floor_source=state.floor_source, open_tasks=len(state.open_tasks())),
            )
            if self.signal.aborted:
                message = message or self.signal.reason
            self.emit(
                GROUP,
                TurnEnd(
                    ok=ok and not self.signal.aborted, aborted=self.signal.aborted, floor=state.floor, message=message
                ),
            )
            self.out.put_nowait(None)

    def emit(self, actor: str, event: Event | TeamEvent) -> None:
        self.out.put_nowait(ActorEvent(actor, event))

    def post(self, sender: str, text: str, **fields: Any) -> GroupMessage:
        message = self.group.bus.post(sender, text, turn_id=self.id, **fields)
        self.emit(GROUP, MessagePosted(message=message.record()))
        return message

    # ---- the commander ----
    async def _commander(self, note: str = "") -> bool:
        group = self.group
        state = group.store.state
        new = group.bus.after(state.cursors.get(COMMANDER))
        told = render_for(COMMANDER, new)
        if group.interrupted:  # a crash cut these short: the commander hears it once and may pick them up
            cut = "\n".join(f'<interrupted owner="{t.owner}">{t.goal}</interrupted>' for t in group.interrupted)
            note = "\n".join(p for p in (cut, note) if p)
            group.interrupted = []
        tools: list[Tool] = [DispatchTo(self), RunWorker(self), HandOffTo(self)]
        if self.can_create:
            tools.append(CreateAgent(self))
        agent = group.agent(None, tools, self._commander_note())
        last: Event | None = None
        steer = self.steer if state.floor == COMMANDER else None
        async with aclosing(
            agent.run(
                "\n".join(p for p in (told, note) if p),
                session=group.session(COMMANDER),
                signal=self.signal,
                steer=steer,
                permissions=self.permissions,
                budget=self.budget,
                untrusted=carried_by(new),
            )
        ) as events:
            async for event in events:
                _gather(self.pending, event)
                if isinstance(event, ToolEnd) and event.name not in TEAM_TOOLS:
                    self.trail.append(self._trail(event, _at(self.pending)))
                elif isinstance(event, ToolEnd) and event.name in ASKS and event.is_error and not event.stopped:
                    said = " ".join(b.text for b in event.content if isinstance(b, TextBlock))
                    failed = {"tool": event.name, "ok": False, "failed": said, "at": _at(self.pending)}
                    self.trail.append(failed)  # a reload says it too, where it was said
                self._asking(event)
                self.emit(COMMANDER, event)
                last = event
        stopped = isinstance(last, Error) and last.kind == "aborted"
        failure = last.message if isinstance(last, Error) and not stopped else None
        self._flush_commander(failure=failure, usage_from=last, stopped=stopped)
        state.cursors[COMMANDER] = group.bus.last_id or ""
        group.store.save()
        return isinstance(last, Done)

    def _flush_commander(
        self, *, failure: str | None = None, usage_from: Event | None = None, stopped: bool = False
    ) -> None:
        """Post what the commander said since its last segment as one bubble segment."""
        text = "".join(self.pending).strip()
        self.pending.clear()
        if not text and not self.trail and failure is None and not stopped:
            return
        extra = _spent(usage_from)
        self.post(
            COMMANDER,
            text,
            to=(USER,),
            seg=self.seg,
            process=tuple(self.trail),
            failure=failure,
            stopped=stopped,
            **extra,
        )
        self.trail.clear()
        self.seg += 1

    def _commander_note(self) -> str:
        members = self.group.store.state.members
        lines = [
            "You host this conversation as the commander of a team. Messages reach you wrapped as "
            '<msg from="…">; answer the person directly when you can.',
            "To involve a member, call dispatch_to (its answer comes back to you; add what is new), "
            "hand_off_to (its answer ends your turn; an interactive member keeps the floor), or run_worker. "
            "Writing @name in your own text does nothing.",
            "When no member, skill or connector fits, solve the task yourself in this turn with bash and a short "
            "script, check its output, and if the task may come back offer to keep it with skill_save.",
        ]
        if members:
            lines.append("Members:")
            lines += [
                f"- {name}: {self.group.agents[name].description}" for name in members if name in self.group.agents
            ]
        else:
            lines.append("No member agents are in this conversation; run_worker without `to` still works.")
        return "\n".join(lines)

    # ---- members (tools.Dispatcher) ----
    @property
    def can_create(self) -> bool:
        return self.group.agent_store is not None

    def create_agent(self, spec: AgentSpec) -> str:
        assert self.group.agent_store is not None
        self.group.agent_store.add(spec)  # ConfigError: a name taken meanwhile
        self.group.agents[spec.name] = spec
        self.group.set_members([*self.group.members, spec.name])
        return f"created {spec.name}; it is now a member. {self.members_line()}"

    def members_line(self) -> str:
        return f"Members: {', '.join(self.group.store.state.members) or 'none'}."

    async def dispatch(self, to: str, message: str, *, kind: str, ctx: ToolContext) -> tuple[str, bool]:
        text, failed, read = await self._child(self._dispatch(to, message, kind=kind, carried=sources_read(ctx)))
        return _tainted(ctx, to, text, read), failed

    async def worker(self, task: str, *, ctx: ToolContext) -> tuple[str, bool]:
        text, failed, read = await self._child(self._worker(task, carried=sources_read(ctx)))
        return _tainted(ctx, "a worker", text, read), failed

    async def _child(self, run: Coroutine[Any, Any, _Outcome]) -> _Outcome:
        """Run a member or worker as a task of the turn, shielded from the commander's tool batch: on a
        stop the batch gives up at once, while the child ends on the same signal with its own error
        event and bubble; the turn waits for every child before it ends."""
        child = asyncio.ensure_future(run)
        self.children.add(child)
        return await asyncio.shield(child)

    async def _dispatch(self, to: str, message: str, *, kind: str, carried: Sequence[str]) -> _Outcome:
        state = self.group.store.state
        if to not in state.members or to not in self.group.agents:
            problem = f"no member named {to!r}. {self.members_line()}"
            return f'<worker-error from="{to}" aborted="false">{problem}</worker-error>', True, []
        if self.budget is not None and (reason := self.budget.blocked()) is not None:
            return f'<worker-error from="{to}" aborted="false">not dispatched: {reason}</worker-error>', True, []
        self._flush_commander()  # the commander's words before the dispatch are a segment of their own
        task = self.group.store.add_task(to, message)
        self.tasks.append(task)
        extra: dict[str, Any] = {"task": task.id, "kind": kind}
        if carried:  # the task may quote outside text the commander read: the agent's run knows it
            extra["untrusted"] = list(carried)
        self.post(COMMANDER, "", to=(to,), dispatch=message, seg=self.seg, extra=extra)
        async with self.dispatch_slots:
            text, error, reason, read = await self._member(
                to, addressed=(COMMANDER,) if kind == "dispatch" else (USER,), floor_run=kind == "handoff"
            )
        if error is not None:
            self.group.store.finish(task, "cancelled" if error.aborted else "failed", error.message)
            aborted = "true" if error.aborted else "false"
            return f'<worker-error from="{to}" aborted="{aborted}">{error.message}</worker-error>', True, read
        if kind == "handoff":
            spec = self.group.agents[to]
            if spec.interactive and reason is None:
                state.floor, state.floor_source = to, "commander_handoff"  # the task stays open with it
                self.emit(
                    GROUP, StateChanged(floor=to, floor_source="commander_handoff", open_tasks=len(state.open_tasks()))
                )
            else:
                self.group.store.finish(task, "done" if reason != "capability_boundary" else "failed", text)
        else:
            self.group.store.finish(task, "done", text)
        self.group.store.save()
        result = f'<worker-result from="{to}">\n{text}\n</worker-result>'
        worktree = self.worktrees.get(to)
        if worktree is not None and self.group.worktrees is not None:  # what it changed, in its own worktree
            diff = await self.group.worktrees.diff(worktree)
            result += f'\n<diff from="{to}" worktree="{worktree}">\n{diff}\n</diff>'
        return result, False, read

    async def _worker(self, task: str, *, carried: Sequence[str]) -> _Outcome:
        self.workers += 1
        worker_id = f"worker-{self.id[:6]}-{self.workers}"
        agent = self.group.agent(None, (), "You are a worker: do exactly the task you are given and report the result.")
        last: Event | None = None
        read: list[str] = list(carried)
        async with self.dispatch_slots:
            async with aclosing(
                agent.run(
                    task,
                    session=InMemorySession(),
                    signal=self.signal,
                    permissions=self.permissions,
                    budget=self.budget,
                    untrusted=carried,
                )
            ) as events:
                async for event in events:
                    self.emit(worker_id, event)
                    read += _read(event)
                    last = event
        ok = isinstance(last, Done)
        self.trail.append({"worker": worker_id, "task": task[:200], "ok": ok, "at": _at(self.pending)})
        if isinstance(last, Done):
            return f'<worker-result from="{worker_id}">\n{last.text}\n</worker-result>', False, read
        error = last if isinstance(last, Error) else None
        aborted = "true" if error is not None and error.aborted else "false"
        reason = error.message if error is not None else "the worker ended without an answer"
        return f'<worker-error from="{worker_id}" aborted="{aborted}">{reason}</worker-error>', True, read

    async def _to_members(self, targets: tuple[str, ...]) -> bool:
        """The person addressed members (with @, or the floor holder without): each answers in its own bubble."""
        state = self.group.store.state
        floor = state.floor
        results = await asyncio.gather(
            *(self._member(name, addressed=(USER,), floor_run=name == floor, steer=name == floor) for name in targets)
        )
        ok = all(error is None for _, error, _, _ in results)
        for name, (_, _error, reason, _read) in zip(targets, results, strict=True):
            if name == floor and reason is not None:  # handed back: the floor returns to the commander
                for task in state.open_tasks():
                    if task.owner == name:
                        self.group.store.finish(task, "done" if reason == "completed_handoff" else "failed")
                state.floor, state.floor_source = COMMANDER, "default"
                self.group.store.save()
                self.emit(
                    GROUP, StateChanged(floor=COMMANDER, floor_source="default", open_tasks=len(state.open_tasks()))
                )
                if state.open_tasks() or reason == "capability_boundary":
                    note = f'<handback from="{name}" reason="{reason}" />'
                    if state.open_tasks():
                        note += "\nOpen tasks:\n" + "\n".join(f"- {t.owner}: {t.goal}" for t in state.open_tasks())
                    ok = await self._commander(note) and ok
        return ok and not self.signal.aborted

    async def _member(
        self, name: str, *, addressed: tuple[str, ...], floor_run: bool, steer: bool = False
    ) -> tuple[str, Error | None, Literal["completed_handoff", "capability_boundary"] | None, list[str]]:
        """Run one member on its slice since it last ran; post its bubble. Returns (its text, the error
        that ended it, the hand-back reason when it is the floor holder and handed back, the outside text
        its answer may carry)."""
        group = self.group
        spec = group.agents[name]
        state = group.store.state
        new = group.bus.slice_for(name, group.bus.after(state.cursors.get(name)))
        told = render_for(name, new)
        read = carried_by(new)
        worktree = await group.worktrees.prepare(name) if spec.worktree and group.worktrees is not None else None
        if worktree is not None:
            self.worktrees[name] = worktree
        agent = group.agent(spec, (), _member_note(spec), worktree)
        last: Event | None = None
        trail: list[dict[str, Any]] = []
        said: list[str] = []  # all it said, before its calls too (its run's answer is only what came after the last)
        async with aclosing(
            agent.run(
                told or "(no new messages)",
                session=group.session(name),
                signal=self.signal,
                steer=self.steer if steer else None,
                permissions=self.permissions,
                budget=self.budget,
                untrusted=read,
            )
        ) as events:
            scrub = StreamScrub()  # its hand-back marker is the floor's business, never text to show
            async for event in events:
                read += _read(event)
                _gather(said, event)
                if isinstance(event, ToolEnd):
                    trail.append(self._trail(event, _at(said)))
                self._asking(event)
                for shown in scrub.events(event):
                    self.emit(name, shown)
                last = event
        error = last if isinstance(last, Error) else None
        raw = last.text if isinstance(last, Done) else error.partial_text if error is not None else ""
        raw = "".join(said).strip() or raw  # a reload and the phone read what was shown live, not its last part
        parsed = parse_handback(raw)
        reason = parsed.reason if floor_run else None
        extra = _spent(last)
        read = list(dict.fromkeys(read))
        if read:  # whoever reads this bubble later reads what it carries
            extra["extra"] = {**extra.get("extra", {}), "untrusted": read}
        self.post(
            name,
            parsed.text,
            to=addressed,
            process=tuple(trail),
            failure=error.message if error is not None and error.kind != "aborted" else None,
            stopped=error is not None and error.kind == "aborted",
            model=spec.model,
            **extra,
        )
        state.cursors[name] = group.bus.last_id or ""
        group.store.save()
        return parsed.text, error, reason, read

    def _asking(self, event: Event) -> None:
        if isinstance(event, PermissionRequest):
            self.asked[event.tool_use_id] = event
        elif isinstance(event, ToolStart) and event.summary:
            self.summaries[event.id] = event.summary

    def _trail(self, event: ToolEnd, at: int) -> dict[str, Any]:
        """A finished call on its bubble's trail, with the question it asked as it was answered (a reload draws
        the closed card above it, as live), and `at`: how much of the bubble's text came before it."""
        step: dict[str, Any] = {
            "tool": event.name,
            "ok": not event.is_error,
            "ms": round(event.duration * 1000),
            "at": at,
        }
        summary = self.summaries.pop(event.id, "")
        if summary:  # the call in one line, as its card said it live
            step["summary"] = summary
        request = self.asked.pop(event.id, None)
        approval = self.answered(request) if request is not None and self.answered is not None else None
        if approval is not None:
            step["approval"] = approval
        return step


def _gather(said: list[str], event: Event) -> None:
    """What an actor says, as its bubble keeps it: what it says after a call is not glued to what it said before."""
    if isinstance(event, TextDelta):
        said.append(event.text)
    elif isinstance(event, ToolStart) and said and said[-1] != PARAGRAPH:
        said.append(PARAGRAPH)


def _at(said: Sequence[str]) -> int:
    """Where in a bubble's text a step of its trail came: after what was said so far (as the bubble's text is
    stored: stripped of its leading blank)."""
    return len("".join(said).lstrip())


_Outcome = tuple[str, bool, list[str]]  # the text for the commander, whether it failed, outside text it carries


def _read(event: Event) -> list[str]:
    """The outside text a tool result put in front of the actor: what tools mark, and — for memory, skill and
    learned writes — any tool output but Orkas's own words (engine/tools/untrusted.py)."""
    if not isinstance(event, ToolEnd):
        return []
    if event.details and isinstance(event.details.get("untrusted"), str):
        return [event.details["untrusted"]]
    source = outside_source(event.name, event.content, event.is_error)
    return [source] if source is not None else []


def carried_by(messages: Sequence[GroupMessage]) -> list[str]:
    """What outside text these bus messages carry (an agent's answer after it read a web page)."""
    found: list[str] = []
    for message in messages:
        sources = message.extra.get("untrusted") if isinstance(message.extra, dict) else None
        if isinstance(sources, list):
            found += [str(s) for s in sources]
    return list(dict.fromkeys(found))


def _tainted(ctx: ToolContext, who: str, text: str, read: Sequence[str]) -> str:
    """A member's answer that carries outside text counts as read by the commander's turn (a memory write then
    asks first); when that text reached the member marked as data, the answer reaches the commander so too."""
    if not read:
        return text
    for source in read:
        note(ctx, f"{who}: {source}")
    shown = marked(read)  # what it read marked as data: its answer is marked so too
    return wrap(text, f"{who}, after reading {', '.join(shown)}") if shown else text


def _member_note(spec: AgentSpec) -> str:
    note = (
        f"You are {spec.name}, a member of a group conversation hosted by a commander. Messages reach you "
        'wrapped as <msg from="…"> and tasks as <dispatch from="commander">; you see only what was sent to '
        "you or mentions you. Answer the task; your reply is shown to the person as your own message."
    )
    if spec.interactive:
        note += (
            "\nWhen the person has been talking with you directly and their need is met, end your reply with "
            '<handback reason="completed_handoff" />; if it is beyond what you can do, end it with '
            '<handback reason="capability_boundary" />. The conversation then returns to the commander.'
        )
    return f"{spec.prompt}\n\n{note}"


def _spent(last: Event | None) -> dict[str, Any]:
    """What an actor's run used and cost, for its bubble: a finished run's, or what a stopped or failed one had spent
    by then (shown live as it went: a reload shows the same)."""
    if isinstance(last, Done):
        return {"usage": _usage(last.usage), "cost": last.cost}
    if not isinstance(last, Error):
        return {}
    # What failed, as the views word it (a spending limit in the person's words, with its button): the failure's
    # sentence alone read as the engine's, with a terminal command in it, after a reload.
    why: dict[str, Any] = {"extra": {"error": last.kind, "cause": last.cause}} if last.kind != "aborted" else {}
    if not (last.usage.counted or last.counted_so_far):
        return why
    spent = {"counted_so_far": last.counted_so_far, **why}
    return {**spent, "usage": _usage(last.usage), "cost": last.cost} if last.usage.counted else spent


def _usage(usage: Usage) -> dict[str, int]:
    return {"input": usage.input_tokens, "output": usage.output_tokens}

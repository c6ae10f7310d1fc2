"""`orkas run "prompt" --agents a,b [--json] [--session ID]`: a group conversation on the command line.

The commander hosts; the named agents are its members. `--session ID` continues the conversation (its
members and floor included; `--agents` replaces the members). In `--json` every line carries `actor`:
`commander`, an agent's name, a worker id, or `group` for the group's own events (a message posted, the
floor moving, the turn's end); text deltas of different actors are never merged. Text mode prints each
bubble as it is posted, `name: text`, and tool calls on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orkas.adapter.permission_rules import RuleStore
from orkas.adapter.run_signals import RunWatch
from orkas.adapter.signals import SignalLog, learning_recorder
from orkas.adapter.usage import LedgerBudget, UsageLedger
from orkas.app import (
    GitWorktrees,
    Settings,
    build_agent,
    connector_hub,
    external_member,
    load_configured,
    settings_from_env,
    skill_access,
    skill_registry,
)
from orkas.cli.run import _knowledge
from orkas.core.errors import ConfigError
from orkas.engine.abort import AbortSignal
from orkas.engine.consent import Permissions
from orkas.engine.events import PermissionRequest, Retry, ToolEnd, event_dict
from orkas.engine.runner import Agent
from orkas.engine.tools.base import Tool
from orkas.team.agents import AgentSpec, AgentStore
from orkas.team.bus import USER
from orkas.team.events import ActorEvent, MessagePosted, StateChanged, TurnEnd, UnknownMentions, team_event_dict
from orkas.team.group import Group, model_slots

EXIT_OK, EXIT_FAILED, EXIT_ABORTED = 0, 1, 130
SESSION_ID_CHARS = frozenset("0123456789abcdef")


def groups_dir(settings: Settings) -> Path:
    return settings.data_dir / "conversations"


def _valid(session_id: str) -> bool:
    return 8 <= len(session_id) <= 64 and set(session_id) <= SESSION_ID_CHARS


async def run_group(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.cli.run import _prompt

    settings = settings_from_env(env)
    configured = load_configured(settings)
    for problem in configured.problems:
        print(f"orkas: {problem}", file=sys.stderr)
    loaded = AgentStore(settings.data_dir / "agents").load()
    wanted = [n.strip() for n in (args.agents or "").split(",") if n.strip()]
    for name in wanted:
        if name in loaded.problems:
            raise ConfigError(f"agent {name!r} cannot be used: {loaded.problems[name]}")
        if name not in loaded.agents:
            raise ConfigError(f"no agent {name!r}; agents: {', '.join(loaded.agents) or 'none'} (orkas agents add …)")
    if args.session:
        if not _valid(args.session) or not (groups_dir(settings) / args.session / "state.json").exists():
            raise ConfigError(f"no group conversation {args.session!r}")
        conversation = args.session
    else:
        conversation = uuid.uuid4().hex
    folder: Path = args.workspace
    skills = skill_registry(settings, background=False)
    hub = connector_hub(settings, configured)
    knowledge, past = _knowledge(settings)  # for external members' bridge (opened only when it exists)

    def make_agent(spec: AgentSpec | None, tools: Sequence[Tool], note: str, workspace: Path | None = None) -> Agent:
        model = spec.model if spec is not None and spec.model else args.model
        worker = spec is None and not tools and bool(note)  # an anonymous worker: only its task
        if spec is not None and spec.backend:  # an external agent CLI, with its bridge back to Orkas
            return external_member(  # type: ignore[return-value]
                settings,
                spec,
                workspace=workspace or folder,
                knowledge=knowledge,
                past_conversations=past,
                skills=skill_access(skills, spec.name, spec.skills),
                connectors=hub,
            )
        return build_agent(
            settings,
            workspace=workspace or folder,
            model=model,
            max_tool_loops=args.max_tool_loops,
            retries=args.retries,
            context_window=args.context_window,
            configured=configured,
            extra_tools=tools,
            only_tools=spec.tools if spec is not None else None,
            note=note,
            memory_tool=spec is not None or bool(tools),  # an anonymous worker gets only its task
            skills=None if worker else skill_access(skills, spec.name if spec else None, spec.skills if spec else None),
            learned=None if worker else (spec.name if spec else "commander"),
            connectors=None if worker else hub,
        )

    make_agent(None, (), "")  # a configuration mistake (no provider, a bad model) is said before anything runs
    store = AgentStore(settings.data_dir / "agents")
    worktrees = GitWorktrees(settings, folder.resolve())
    group = Group(
        groups_dir(settings) / conversation,
        agents=loaded.agents,
        make_agent=make_agent,
        store=store,
        worktrees=worktrees,
        dispatch_cap=settings.max_dispatch,
        slots=model_slots(settings.max_model_calls),
    )
    if wanted or not args.session:
        group.set_members(wanted)
    if not args.json:
        print(f"orkas: session {conversation} (continue it with --session {conversation})", file=sys.stderr)
    stop = AbortSignal()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.abort, "stopped by the user")
    interactive = sys.stdin.isatty() and not args.json
    rules = RuleStore(settings.data_dir / "permission_rules.json")
    permissions = Permissions(
        workspace=folder.resolve(),
        mode=args.mode,
        can_ask=interactive,
        rules=rules.for_workspace(folder.resolve()),
        on_rule_added=rules.add,
    )
    budgets = configured.product.budgets
    budget = LedgerBudget(
        UsageLedger(settings.data_dir / "usage.jsonl"),
        conversation=conversation,
        per_conversation=budgets.per_conversation,
        per_day=budgets.per_day,
    )
    show = _json_line if args.json else _TextShow().show
    if args.json:
        start = {
            "type": "group_start",
            "session_id": conversation,
            "members": group.members,
            "floor": group.state.floor,
        }
        _print({"actor": "group", **start})
    end: TurnEnd | None = None
    learning = configured.product.preferences.learning
    watch = RunWatch(  # self-evolution: each member's run counted, as the app counts them
        conversation,
        args.prompt,
        learning_recorder(SignalLog(settings.data_dir / "signals"), lambda: learning),
        addressed=[name for name in group.members if f"@{name}" in args.prompt],
    )
    try:
        async for item in group.send(args.prompt, signal=stop, permissions=permissions, budget=budget):
            show(item)
            if item.actor != "group":
                watch.see(item.event, item.actor)
            if isinstance(item.event, PermissionRequest):
                permissions.answer(item.event.id, await _prompt(item.event))
            if isinstance(item.event, TurnEnd):
                end = item.event
    finally:
        group.close()
        await hub.close()
    if end is not None and end.ok:
        return EXIT_OK
    if end is not None and end.aborted:
        return EXIT_ABORTED
    if end is not None and end.message:
        print(f"orkas: {end.message}", file=sys.stderr)
    return EXIT_FAILED


def _json_line(item: ActorEvent) -> None:
    event = item.event
    if isinstance(event, MessagePosted | StateChanged | UnknownMentions | TurnEnd):
        _print({"actor": item.actor, **team_event_dict(event)})
    else:
        _print({"actor": item.actor, **event_dict(event)})


def _print(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class _TextShow:
    def show(self, item: ActorEvent) -> None:
        event = item.event
        if isinstance(event, MessagePosted):
            message = event.message
            if message["from"] == USER:
                return
            if message.get("dispatch") is not None:
                print(f"• {message['from']} → {', '.join(message['to'])}: {message['dispatch']}", file=sys.stderr)
            elif message.get("text"):
                print(f"{message['from']}: {message['text']}\n", flush=True)
        elif isinstance(event, ToolEnd):
            status = "failed" if event.is_error else "ok"
            print(f"• [{item.actor}] {event.name} → {status} in {event.duration:.1f} s", file=sys.stderr)
        elif isinstance(event, UnknownMentions):
            names = ", ".join(f"@{n}" for n in event.names)
            print(f"orkas: nobody here is called {names}; sent to {event.delivered_to}", file=sys.stderr)
        elif isinstance(event, Retry):
            print(f"• [{item.actor}] retrying: {event.reason}", file=sys.stderr)

"""`orkas schedule add|list|remove`: a conversation's scheduled prompts, from a terminal.

    orkas schedule add "summarise what changed here" --when "every weekday at 8:00" [--session ID] [--workspace DIR]
    orkas schedule list
    orkas schedule remove ID

Without `--session` a new conversation is made in the workspace (here by default), titled by the prompt. Schedules
fire while Orkas runs — the window, or `orkas serve --background` — and `list` says whether anything does now.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

EXIT_OK, EXIT_FAILED = 0, 1
NOTHING_RUNS = (
    "Nothing is running to fire these schedules now: they run while Orkas is open, or after `orkas serve --background`."
)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    schedule = commands.add_parser("schedule", help="run a prompt in a conversation later, or on a schedule")
    actions = schedule.add_subparsers(dest="schedule_command", required=True)
    add = actions.add_parser("add", help="schedule a prompt")
    add.add_argument("prompt", help="what to ask, as you would in the chat")
    add.add_argument("--when", required=True, help="'every weekday at 8:00', 'in 2 hours', or a cron line")
    add.add_argument("--session", help="the conversation (its id); default: a new one")
    add.add_argument("--workspace", type=Path, help="a new conversation's folder (default: here)")
    add.add_argument("--timezone", help="default: this machine's (e.g. Europe/Lisbon)")
    actions.add_parser("list", help="the schedules, their next runs, and whether anything fires them now")
    remove = actions.add_parser("remove", help="remove a schedule")
    remove.add_argument("id", help="the schedule's id (see `orkas schedule list`)")


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.adapter.conversations.store import ConversationStore
    from orkas.adapter.schedules.store import ScheduleStore
    from orkas.app import protected_data, settings_from_env

    settings = settings_from_env(env)
    store = ScheduleStore(settings.data_dir)
    conversations = ConversationStore(settings.data_dir)
    if args.schedule_command == "remove":
        removed = store.remove(args.id)
        print(f"removed {removed.id} ({removed.when})")
        return EXIT_OK
    if args.schedule_command == "add":
        store.check(args.prompt, args.when, args.timezone)  # a bad time makes no conversation either
        if args.session:
            conversation = conversations.get(args.session)
        else:
            workspace = (args.workspace or Path.cwd()).absolute()
            conversation = conversations.create(
                title=args.prompt[:60], workspace=workspace, protected=protected_data(settings.data_dir)
            )
        made = store.add(conversation.id, args.prompt, args.when, args.timezone)
        assert made.next is not None
        first = _at(made.next, made.timezone)
        print(f"{made.id}: {made.when} ({made.timezone}), first {first}, in conversation {conversation.id}")
        if store.runner() is None:
            print(NOTHING_RUNS, file=sys.stderr)
        return EXIT_OK
    titles = {c.id: c.title for c in conversations.recent()}
    schedules = store.load()
    for s in schedules:
        state = f"next {_at(s.next, s.timezone)}" if s.enabled and s.next else "off" if s.next else "done"
        if s.enabled and s.next is not None and s.next <= time.time():
            state = f"due since {_at(s.next, s.timezone)}: runs once Orkas runs and its chat is free"
        last = f"; last {_at(s.last['at'], s.timezone)}: {s.last['outcome']}" if s.last else ""
        title = titles.get(s.conversation) or s.conversation
        print(f"{s.id}\t{s.when} ({s.timezone})\t{state}{last}\t{title}\t{s.prompt[:60]}")
    if not schedules:
        print("no schedules (orkas schedule add …, the chat's schedule proposals, or Settings → Schedules)")
        return EXIT_OK
    runner = store.runner()
    print(NOTHING_RUNS if runner is None else f"fired by the Orkas process {runner}", file=sys.stderr)
    return EXIT_OK


def _at(moment: float | None, tz: str) -> str:
    """A moment in the schedule's own time zone."""
    from orkas.adapter.schedules.when import zone

    return datetime.fromtimestamp(moment, zone(tz)).strftime("%a %d %b %Y %H:%M") if moment else "-"

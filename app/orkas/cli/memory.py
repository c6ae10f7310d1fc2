"""`orkas memory`: cross-session memory from a terminal.

orkas memory enable | disable    memory on or off (off until the person turns it on)
orkas memory status [--json]     on or off, and what is kept: the profile and the notes, with their sizes
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

EXIT_OK = 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    memory = commands.add_parser("memory", help="cross-session memory: on, off, and what is kept")
    sub = memory.add_subparsers(dest="memory_command", required=True)
    sub.add_parser("enable", help="turn memory on: a profile and notes, kept across chats and shown to the agent")
    sub.add_parser("disable", help="turn memory off (what was kept stays in the data folder, unused)")
    status = sub.add_parser("status", help="on or off, and what is kept")
    status.add_argument("--json", action="store_true")


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.app import settings_from_env
    from orkas.cli.switches import SAID, state, switch
    from orkas.engine.memory import Memory

    settings = settings_from_env(env)
    if args.memory_command in ("enable", "disable"):
        return switch(settings, "memory", args.memory_command == "enable")
    on = state(settings, "memory")
    memory = Memory.in_folder(settings.data_dir / "memory")
    kept: dict[str, dict[str, Any]] = {
        target: {"entries": memory.store(target).entries(), "size": memory.store(target).size()}
        for target in ("profile", "notes")
    }
    if args.json:
        print(json.dumps({"enabled": on, **kept}, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(SAID["memory"][0 if on else 1])
    for target, found in kept.items():
        count = len(found["entries"])
        print(f"{target}: {count} {'entry' if count == 1 else 'entries'}, {found['size']} characters")
        for entry in found["entries"]:
            print(f"  - {entry}")
    return EXIT_OK

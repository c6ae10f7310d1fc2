"""`orkas agents add | list | remove`: the agents of the group chat, as `<data>/agents/<name>/AGENT.md`.

orkas agents add NAME --description TEXT --prompt TEXT [--model PROVIDER/MODEL] [--tools a,b] [--interactive]
orkas agents list [--json]
orkas agents remove NAME
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from orkas.core.errors import ConfigError
from orkas.core.paths import data_dir

EXIT_OK, EXIT_FAILED = 0, 1


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    agents = commands.add_parser("agents", help="the agents of the group chat: add, list, remove")
    sub = agents.add_subparsers(dest="agents_command", required=True)
    add = sub.add_parser("add", help="create an agent (a folder with its AGENT.md)")
    add.add_argument("name", help="lowercase letters, digits, - or _ (1-32)")
    add.add_argument("--description", required=True, help="when the commander should use it")
    add.add_argument("--prompt", required=True, help="its instructions (its system prompt); - reads standard input")
    add.add_argument("--model", help="its own model entry, provider/model (default: the conversation's)")
    add.add_argument("--tools", help="comma-separated allow-list of tools (default: all)")
    add.add_argument("--interactive", action="store_true", help="it may keep talking with the person after a hand-off")
    add.add_argument("--worktree", action="store_true", help="it writes in its own git worktree")
    add.add_argument("--backend", choices=("claude", "codex", "opencode"), help="run it with this external agent CLI")
    add.add_argument("--cli", help="that CLI's path (default: the backend's name on PATH)")
    listing = sub.add_parser("list", help="the agents and any file that cannot be used, with why")
    listing.add_argument("--json", action="store_true")
    remove = sub.add_parser("remove", help="delete an agent's folder")
    remove.add_argument("name")


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.team.agents import AgentSpec, AgentStore

    store = AgentStore(data_dir(env.get("ORKAS_HOME")) / "agents", search_path=env.get("PATH", ""))
    if args.agents_command == "add":
        prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
        tools = tuple(t.strip() for t in args.tools.split(",") if t.strip()) if args.tools else None
        spec = AgentSpec(
            name=args.name,
            description=args.description,
            prompt=prompt,
            model=args.model,
            tools=tools,
            interactive=args.interactive,
            worktree=args.worktree,
            backend=args.backend,
            cli=args.cli,
        )
        path = store.add(spec)  # ConfigError: the entry point prints it and exits 2
        print(f"added {spec.name}: {_home_relative(path)}")
        return EXIT_OK
    if args.agents_command == "list":
        loaded = store.load()
        if args.json:
            print(
                json.dumps(
                    {
                        "agents": [spec.public() for spec in loaded.agents.values()],
                        "problems": [{"name": name, "problem": problem} for name, problem in loaded.problems.items()],
                    },
                    ensure_ascii=False,
                )
            )
            return EXIT_OK
        if not loaded.agents and not loaded.problems:
            print("no agents yet (orkas agents add NAME --description … --prompt …)")
        for spec in loaded.agents.values():
            flags = " · interactive" if spec.interactive else ""
            model = f" · {spec.model}" if spec.model else ""
            if spec.backend:
                model = f" · {spec.backend} CLI" + ("" if spec.cli_found else " (NOT FOUND: install it or set --cli)")
            print(f"{spec.name}{model}{flags}: {spec.description}")
        for name, problem in loaded.problems.items():
            print(f"{name}: cannot be used: {problem}", file=sys.stderr)
        return EXIT_FAILED if loaded.problems else EXIT_OK
    if args.agents_command == "remove":
        if not store.remove(args.name):
            raise ConfigError(f"no agent {args.name!r}")
        print(f"removed {args.name}")
        return EXIT_OK
    return EXIT_FAILED


def _home_relative(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)

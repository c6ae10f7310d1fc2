"""`orkas packages`: external packages hosted verbatim under `<data>/packages/<name>/`.

    orkas packages install SOURCE [--name N] [--yes]   a git URL (https://, ssh://, git@host:path) or a local folder
    orkas packages list [--json]
    orkas packages update NAME [--yes]
    orkas packages remove NAME
    orkas packages enable NAME | disable NAME
    orkas packages deps NAME yes|no                   change the remembered answer about its dependencies

Installing a package's dependencies (pip into its own .venv, npm ci) is asked once and remembered; `--yes`
answers yes, and without a terminal the answer is no.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping

EXIT_OK = 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    packages = commands.add_parser("packages", help="external packages: install, list, update, remove, enable, disable")
    sub = packages.add_subparsers(dest="packages_command", required=True)
    install = sub.add_parser("install", help="clone a package (skills, commands or both) and keep it")
    install.add_argument("source", help="https:// or ssh:// git URL, git@host:path, or a local folder")
    install.add_argument("--name", help="its name here (default: from the source)")
    install.add_argument("--yes", action="store_true", help="install its dependencies without asking")
    listing = sub.add_parser("list", help="installed packages")
    listing.add_argument("--json", action="store_true")
    update = sub.add_parser("update", help="clone it again from its source; the old copy stays if anything fails")
    update.add_argument("name")
    update.add_argument("--yes", action="store_true", help="install its dependencies without asking")
    for verb, text in (("remove", "delete it"), ("enable", "use it again"), ("disable", "keep it but do not use it")):
        sub.add_parser(verb, help=text).add_argument("name")
    deps = sub.add_parser("deps", help="change the remembered answer about installing its dependencies")
    deps.add_argument("name")
    deps.add_argument("answer", choices=["yes", "no"])


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.adapter.packages.store import dependency_question
    from orkas.app import package_store, settings_from_env

    packages = package_store(settings_from_env(env))
    command = args.packages_command

    async def consent(package: object) -> bool:
        if getattr(args, "yes", False):
            return True
        if not sys.stdin.isatty():
            print(
                f"orkas: not done (no terminal to ask; --yes allows it): {dependency_question(package)}",
                file=sys.stderr,
            )
            return False
        question = f"{dependency_question(package)} [y/N] "
        answer = await asyncio.to_thread(input, question)
        return answer.strip().lower() in ("y", "yes")

    if command == "install":
        package = asyncio.run(packages.install(args.source, name=args.name, consent=consent))
        print(f"installed {package.name}: {describe(package.public())}")
    elif command == "update":
        package = asyncio.run(packages.update(args.name, consent=consent))
        print(f"updated {package.name} to {package.commit[:12] or 'the folder as it is now'}")
    elif command == "list":
        listed = [p.public() for p in packages.load().values()]
        if args.json:
            print(json.dumps(listed, indent=2, ensure_ascii=False))
        elif not listed:
            print("no packages installed")
        for row in [] if args.json else listed:
            state = "on" if row["enabled"] else "off"
            print(f"{row['name']}  {row['kind']:<5} {state:<3} {describe(row)}  {row['source']}")
    elif command == "remove":
        packages.remove(args.name)
        print(f"removed {args.name}")
    elif command in ("enable", "disable"):
        packages.set_enabled(args.name, command == "enable")
        print(f"{args.name}: {'enabled' if command == 'enable' else 'disabled'}")
    elif command == "deps":
        packages.set_consent(args.name, args.answer == "yes")
        print(f"{args.name}: dependencies {'will be' if args.answer == 'yes' else 'will not be'} installed on update")
    return EXIT_OK


def describe(package: Mapping[str, object]) -> str:
    skills = len(package["skill_roots"])  # type: ignore[arg-type]
    commands = [e["name"] for e in package["entries"]]  # type: ignore[attr-defined]
    parts = [f"{skills} skill{'s' if skills != 1 else ''}"]
    if commands:
        parts.append("commands " + ", ".join(commands))
    if package.get("deps"):
        consent = package.get("deps_consent")
        parts.append(f"dependencies {'installed' if consent else 'not installed' if consent is False else 'not asked'}")
    return "; ".join(parts)

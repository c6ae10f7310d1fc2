"""`orkas skills list [--json] | show NAME`: every skill in every root, with its tier and state.

orkas skills list            a table: name, tier, state (ok, shadowed, quarantined, skipped, off)
orkas skills list --json     the records `GET /api/skills` gives
orkas skills show NAME       one skill's SKILL.md (the one in use when several share the name)
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path

from orkas.core.errors import NotFound

EXIT_OK = 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    skills = commands.add_parser("skills", help="the skills agents can use: list, show")
    sub = skills.add_subparsers(dest="skills_command", required=True)
    listing = sub.add_parser(
        "list", help="every skill found, its tier, and why one is shadowed, quarantined or skipped"
    )
    listing.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="a skill's SKILL.md")
    show.add_argument("name", help="the skill's name (or its folder's path)")


def state(record: dict[str, object]) -> str:
    if record["skipped"]:
        return f"skipped: {record['reason']}"
    if record["quarantined"]:
        return f"quarantined: {record['reason']}"
    if record["checking"]:
        return "checking"
    if record["shadowed"]:
        return f"shadowed by {record['shadowed_by']}"
    return "ok" if record["enabled"] else "off"


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.adapter.skills.custom import skill_text
    from orkas.app import settings_from_env, skill_registry

    registry = skill_registry(settings_from_env(env), background=False)
    records = registry.records()
    if args.skills_command == "list":
        if args.json:
            print(json.dumps([r.public() for r in records], indent=2, ensure_ascii=False))
            return EXIT_OK
        if not records:
            print("no skills found")
            return EXIT_OK
        width = max(len(r.name) for r in records)
        for record in records:
            data = record.public()
            print(f"{record.name:<{width}}  {record.tier:<8} {state(data)}  {record.path}")
        return EXIT_OK
    found = registry.find(args.name)
    if not found:
        raise NotFound(f"no skill named {args.name!r}: `orkas skills list` shows them")
    chosen = next((r for r in found if not r.skipped and not r.shadowed), found[0])
    if chosen.skipped:
        print(f"{chosen.path}: {chosen.reason}")
        return EXIT_OK
    print(f"# {chosen.name} — {chosen.tier}, {'trusted' if chosen.trusted else 'from outside Orkas'}: {chosen.path}")
    if chosen.quarantined:
        print(f"# quarantined: {chosen.reason}")
    print(skill_text(Path(chosen.path)), end="")
    return EXIT_OK

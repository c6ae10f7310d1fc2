"""`orkas evolve`: self-evolution from a terminal.

orkas evolve enable | disable               learning on or off (off until the person turns it on): named agents
                                           reflect on their runs and keep skills and a memo; the commander never
orkas evolve run [--agent NAME] [--force]   a cycle now: no 12-hour schedule, no cooldown; the dirty check
                                           and the trigger still decide (--force skips the trigger)
orkas evolve status [--json]                per agent: last reflection, dirty, trigger score and why,
                                           learned skills with their health
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Mapping
from datetime import datetime

from orkas.core.errors import ConfigError

EXIT_OK, EXIT_FAILED = 0, 1


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    evolve = commands.add_parser("evolve", help="learning: on or off, what each named agent learned, reflect now")
    sub = evolve.add_subparsers(dest="evolve_command", required=True)
    run = sub.add_parser("run", help="a reflection cycle now (the dirty check and the trigger still apply)")
    run.add_argument("--agent", help="only this named agent (the commander never evolves)")
    run.add_argument("--force", action="store_true", help="reflect even when the trigger does not fire")
    status = sub.add_parser("status", help="per agent: last reflection, new runs, trigger, learned skills, what waits")
    status.add_argument("--json", action="store_true")
    sub.add_parser("enable", help="turn learning on: named agents reflect on their runs and keep what they learn")
    sub.add_parser("disable", help="turn learning off (what was learned stays, unused until it is on again)")


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.adapter.learning.evolution import outcome_json
    from orkas.app import evolution_for, settings_from_env

    settings = settings_from_env(env)
    if args.evolve_command in ("enable", "disable"):
        from orkas.cli.switches import switch

        return switch(settings, "learning", args.evolve_command == "enable")
    from orkas.cli.switches import state

    learning = state(settings, "learning")
    evolution = evolution_for(settings)
    if args.evolve_command == "run":
        if not learning:
            raise ConfigError("learning is off: nothing reflects until you turn it on (orkas evolve enable)")
        if args.agent is not None and args.agent not in evolution.agents():
            known = ", ".join(evolution.agents()) or "none (orkas agents add …)"
            raise ConfigError(f"no agent {args.agent!r} learns here; named agents: {known} (Orkas itself never does)")
    if args.evolve_command == "status":
        rows = evolution.status()
        if args.json:
            for row in rows:
                row["proposals"] = evolution.proposals(row["agent"])
            print(json.dumps(rows, indent=2, ensure_ascii=False))
            return EXIT_OK
        print("learning is on" if learning else "learning is off (orkas evolve enable turns it on)")
        if not rows:
            print("no named agents yet: only they learn (orkas agents add …); Orkas itself never does")
        for row in rows:
            last = row["last_reflection"]
            when = datetime.fromtimestamp(last).strftime("%Y-%m-%d %H:%M") if last else "never"
            trigger = row["trigger"]
            why = "; ".join(trigger["why"]) or "nothing notable"
            print(f"{row['agent']}: last reflection {when}; {'dirty' if row['dirty'] else 'nothing new'}; ", end="")
            print(f"trigger {trigger['score']:.2f} ({why})")
            for skill in row["learned_skills"]:
                print(f"  skill {skill['name']}: {skill['health']} (read {skill['invoked']} of {skill['advertised']})")
        for proposal in evolution.proposals():
            names = ", ".join(f"{c['kind']} {c['name']}" for c in proposal["changes"])
            print(f"waiting for you: {proposal['agent']} wants to keep {names} (Settings → Learning)")
        return EXIT_OK
    outcomes = asyncio.run(evolution.cycle(agent=args.agent, scheduled=False, force=args.force))
    failed = False
    for outcome in outcomes:
        data = outcome_json(outcome)
        if outcome.error:
            failed = True
            print(f"{outcome.agent}: reflection failed: {outcome.error}")
        elif outcome.reflected:
            print(f"{outcome.agent}: reflected ({outcome.why}): {'; '.join(outcome.changes) or 'nothing to save'}")
        else:
            print(f"{outcome.agent}: skipped: {data['why']}")
    return EXIT_FAILED if failed else EXIT_OK

"""`orkas usage` (tokens and money, today and per conversation) and `orkas budget` (spending limits)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from orkas.adapter.settings.store import SettingsStore
from orkas.adapter.settings.usage import Totals, UsageLedger, today

EXIT_OK = 0


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    usage = commands.add_parser("usage", help="tokens and cost: today, and per conversation")
    usage.add_argument("--day", help="another day, as YYYY-MM-DD")
    budget = commands.add_parser("budget", help="show or set spending limits (US dollars; 0 turns a limit off)")
    budget.add_argument("--day", type=float, help="limit per day")
    budget.add_argument("--conversation", type=float, help="limit per conversation")


def _line(label: str, totals: Totals) -> str:
    cost = f"${totals.cost:.4f}" + (
        f" (+{totals.unpriced_calls} calls of unknown price)" if totals.unpriced_calls else ""
    )
    return (
        f"{label}: {totals.calls} calls, {totals.input_tokens} in / {totals.output_tokens} out tokens, "
        f"{totals.cache_read_tokens} read from cache, {cost}"
    )


def usage(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.app import settings_from_env  # here, not at the top: `orkas` starts faster

    ledger = UsageLedger(settings_from_env(env).data_dir / "usage.jsonl")
    day = args.day or today()
    print(_line(day, ledger.day(day)))
    top = sorted(ledger.by_conversation.items(), key=lambda item: item[1].cost, reverse=True)[:10]
    for conversation, totals in top:
        print("  " + _line(f"conversation {conversation}", totals))
    return EXIT_OK


def budget(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.app import settings_from_env

    store = SettingsStore(settings_from_env(env).data_dir / "settings.json")
    product = store.load()
    if args.day is not None:
        product.budgets.per_day = args.day or None
    if args.conversation is not None:
        product.budgets.per_conversation = args.conversation or None
    if args.day is not None or args.conversation is not None:
        store.save(product)
    day = f"${product.budgets.per_day:.2f}" if product.budgets.per_day else "no limit"
    conversation = f"${product.budgets.per_conversation:.2f}" if product.budgets.per_conversation else "no limit"
    print(f"per day: {day}; per conversation: {conversation}")
    return EXIT_OK

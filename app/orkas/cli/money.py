"""`orkas usage` (tokens and money, today and per conversation) and `orkas budget` (spending limits)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from orkas.adapter.settings.store import LIMITS, Budgets, SettingsStore, set_limits
from orkas.adapter.settings.usage import LedgerBudget, Totals, UsageLedger, dollars, today

EXIT_OK = 0


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    usage = commands.add_parser("usage", help="tokens and cost: today, and per conversation")
    usage.add_argument("--day", help="another day, as YYYY-MM-DD")
    budget = commands.add_parser("budget", help="show or set spending limits (US dollars; 0 turns a limit off)")
    budget.add_argument("--day", type=str, help="limit per day (0 for none)")
    budget.add_argument("--month", type=str, help="limit per calendar month (0 for none)")
    budget.add_argument("--conversation", type=str, help="limit per conversation (0 for none)")


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

    data = settings_from_env(env).data_dir
    store = SettingsStore(data / "settings.json")
    given = {"per_day": args.day, "per_month": args.month, "per_conversation": args.conversation}
    changes = {name: value for name, value in given.items() if value is not None}
    budgets = set_limits(store, **changes) if changes else store.load().budgets
    print("; ".join(f"{name.replace('_', ' ')}: {_dollars(getattr(budgets, name))}" for name in LIMITS))
    for warning in _reached(data, budgets):  # a limit at or below what was spent stops the next run: said now
        print(f"note: {warning}")
    return EXIT_OK


def _reached(data: Path, budgets: Budgets) -> list[str]:
    from orkas.adapter.conversations.store import ConversationStore

    ledger = UsageLedger(data / "usage.jsonl")
    overall = LedgerBudget(ledger, "", per_day=budgets.per_day, per_month=budgets.per_month)
    said = [overall.describe({name: cost}) or "" for name, cost in overall.reached().items()]
    if budgets.per_conversation is not None:
        titles = {c.id: c.title for c in ConversationStore(data).recent()}
        over = ledger.chats_over(budgets.per_conversation, titles)
        named = ", ".join(f"“{titles[c] or c}” ({dollars(cost)})" for c, cost in over[:3]) + (
            ", …" if len(over) > 3 else ""
        )
        if over:
            said.append(
                f"{len(over)} conversation{'s' if len(over) > 1 else ''} already spent the per-conversation limit of "
                f"{dollars(budgets.per_conversation)}: {named}; the next message there stops before any model call"
            )
    return said


def _dollars(limit: float | None) -> str:
    """A limit as the person set it: cents shown, smaller amounts not rounded to look like $0.00 ("off")."""
    if not limit:
        return "no limit"
    return dollars(limit)

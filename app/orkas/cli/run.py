"""`orkas run`: one prompt through the agent, on a new or a continued session."""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import signal
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from orkas.adapter.permission_rules import RuleStore
from orkas.adapter.sessions import SessionStore
from orkas.adapter.usage import LedgerBudget, UsageLedger
from orkas.app import (
    Settings,
    build_agent,
    connector_hub,
    embedder_for,
    load_configured,
    settings_from_env,
    skill_access,
    skill_registry,
)
from orkas.core.errors import ConfigError, OrkasError
from orkas.core.fsutil import atomic_write
from orkas.core.logging import since_start
from orkas.core.paths import data_dir, sessions_dir
from orkas.engine.abort import AbortSignal
from orkas.engine.catalog import lookup
from orkas.engine.consent import Decision, Permissions
from orkas.engine.events import Done, Error, Event, PermissionRequest
from orkas.engine.evolution.signals import Observer, RunSignals

if TYPE_CHECKING:
    from orkas.adapter.skill_roots import SkillRegistry
    from orkas.app import Configured
    from orkas.engine.memory.embedders import Embedder
    from orkas.engine.memory.kb import KnowledgeBase
    from orkas.team.agents import AgentSpec

EXIT_OK, EXIT_FAILED, EXIT_ABORTED = 0, 1, 130
log = logging.getLogger(__name__)
GROUP_ID = re.compile(r"^[0-9a-f]{8,64}$")


async def run_command(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.cli.output import JsonPrinter, TextPrinter

    if args.max_tool_loops < 1:
        raise ConfigError("--max-tool-loops must be at least 1")
    if args.retries < 0:
        raise ConfigError("--retries must not be negative")
    if args.context_window is not None and args.context_window < 1024:
        raise ConfigError("--context-window must be at least 1024 tokens")
    settings = settings_from_env(env)
    if args.agent is not None and args.agents is not None:
        raise ConfigError("--agent binds a conversation to one agent; --agents makes a group: use one of them")
    if args.agent is not None and "," in args.agent:
        raise ConfigError(f"--agent names one agent; for a group of {args.agent!r} use --agents")
    if args.agents is not None and not [n for n in args.agents.split(",") if n.strip()]:
        raise ConfigError("--agents needs at least one agent's name (orkas agents list)")
    if args.agents or _group_session(settings, args.session):
        from orkas.cli.group import run_group  # the team layer loads only for a group

        return await run_group(args, env)
    configured = load_configured(settings)
    for problem in configured.problems:
        print(f"orkas: {problem}", file=sys.stderr)
    knowledge, past = _knowledge(settings)
    sessions = SessionStore(sessions_dir(settings.data_dir))
    bound_to = sessions.path(args.session).with_suffix(".agent") if args.session else None  # ConfigError: bad id
    if args.agent is None and bound_to is not None and bound_to.is_file():
        args.agent = bound_to.read_text().strip()  # a session continues with the agent it was bound to
    spec = _bound_agent(settings, args.agent)
    agent = build_agent(
        settings,
        workspace=args.workspace,
        model=args.model or (spec.model if spec is not None else None),
        max_tool_loops=args.max_tool_loops,
        retries=args.retries,
        context_window=args.context_window,
        configured=configured,
        knowledge=knowledge,
        past_conversations=past,
        only_tools=spec.tools if spec is not None else None,
        note=spec.prompt.strip() if spec is not None else "",
        skills=(access := skill_access(_skills(settings), *((spec.name, spec.skills) if spec else (None,)))),
        learned=spec.name if spec is not None else "commander",
        connectors=(hub := connector_hub(settings, configured)),
    )
    actor = spec.name if spec is not None else "commander"
    advertised = access.catalog.advertised(args.context_window or lookup(agent.config.model).context_window)
    store = SessionStore(sessions_dir(data_dir(env.get("ORKAS_HOME"))))
    if args.session:
        session, report = store.open(args.session)
        if report.changed:
            print(f"orkas: repaired session {session.id}: {_summary(report.as_dict())}", file=sys.stderr)
    else:
        session = store.create()
        if not args.json:
            print(f"orkas: session {session.id} (continue it with --session {session.id})", file=sys.stderr)
    if spec is not None:  # remembered with the session: `--session ID` goes on with the same agent
        atomic_write(store.root / f"{session.id}.agent", spec.name.encode())
        if not args.json:
            print(f"orkas: {spec.name} answers (and learns, when learning is on)", file=sys.stderr)
    stop = AbortSignal()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.abort, "stopped by the user")
    printer = JsonPrinter(sys.stdout) if args.json else TextPrinter(sys.stdout, sys.stderr)
    interactive = sys.stdin.isatty() and not args.json
    rules = RuleStore(data_dir(env.get("ORKAS_HOME")) / "permission_rules.json")
    permissions = Permissions(
        workspace=agent.workspace,
        mode=args.mode,
        can_ask=interactive,
        rules=rules.for_workspace(agent.workspace),
        on_rule_added=rules.add,
    )
    if rules.problem:
        print(f"orkas: {rules.problem}", file=sys.stderr)
    budgets = configured.product.budgets
    budget = LedgerBudget(
        UsageLedger(settings.data_dir / "usage.jsonl"),
        conversation=session.id,
        per_conversation=budgets.per_conversation,
        per_day=budgets.per_day,
    )
    last: Event | None = None
    observer = Observer(actor, session.id, args.prompt, advertised)  # self-evolution: this run, counted
    try:
        async for event in agent.run(args.prompt, session=session, signal=stop, permissions=permissions, budget=budget):
            printer.show(event)
            observer.see(event)
            if last is None:
                log.info("run: session %s started after %.0f ms", session.id, since_start() * 1000)
            last = event
            if isinstance(event, PermissionRequest):
                permissions.answer(event.id, await _prompt(event))
    finally:
        session.close()
        await agent.providers.aclose()
        await hub.close()  # local servers end with the run
        if last is not None:
            _record(settings, configured, observer.finish())
    log.info("run: session %s ended (%s) after %.0f ms", session.id, type(last).__name__, since_start() * 1000)
    if isinstance(last, Done):
        return EXIT_OK
    if isinstance(last, Error) and last.aborted:
        return EXIT_ABORTED
    return EXIT_FAILED


ANSWERS: dict[str, Decision] = {"o": "allow_once", "r": "allow_run", "a": "always", "d": "deny", "": "deny"}


EFFECTS = {
    "network": "if allowed, it runs in the sandbox WITH network access",
    "unconfined": "if allowed, it runs OUTSIDE the sandbox, with your files and your keys",
}


async def _prompt(event: PermissionRequest) -> Decision:
    """Ask on the terminal; anything but a clear yes is a no."""
    categories = ", ".join(event.categories) or "changes files"
    effect = f"  ({EFFECTS[event.effect]})\n" if event.effect in EFFECTS else ""
    choices = "allow [o]nce, for this [r]un, [a]lways in this workspace, or [d]eny? "
    if "always" not in event.options:
        choices = "allow [o]nce or [d]eny? "
    question = f"\n{event.tool} wants to run ({categories}):\n  {event.preview}\n{effect}{choices}"
    try:
        reply = await asyncio.to_thread(input, question)
    except EOFError:
        return "deny"
    decision = ANSWERS.get(reply.strip().lower()[:1], "deny")
    return decision if decision in event.options else "deny"


def _summary(report: dict[str, object]) -> str:
    repair = report["repair"]
    assert isinstance(repair, dict)
    parts = []
    if report["torn_tail_bytes"]:
        parts.append("dropped a torn last record")
    if corrupt := report["corrupt_lines"]:
        assert isinstance(corrupt, list)
        parts.append(f"skipped {len(corrupt)} corrupt lines")
    if synthesized := repair["synthesized_results"]:
        assert isinstance(synthesized, list)
        parts.append(f"answered {len(synthesized)} interrupted tool calls")
    return ", ".join(parts) or "reordered tool results"


def _record(settings: Settings, configured: Configured, signals: RunSignals) -> None:
    from orkas.adapter.signals import SignalLog, learning_recorder

    learning = configured.product.preferences.learning
    learning_recorder(SignalLog(settings.data_dir / "signals"), lambda: learning)(signals)


def _bound_agent(settings: Settings, name: str | None) -> AgentSpec | None:
    """`--agent NAME`: the named agent answers this conversation directly (and learns from it, when learning is
    on). Raises `ConfigError` for an agent that does not exist, is broken, or is an outside CLI."""
    if name is None:
        return None
    if not name.strip():
        raise ConfigError("--agent needs an agent's name (orkas agents list)")
    from orkas.team.agents import AgentStore

    loaded = AgentStore(settings.data_dir / "agents").load()
    if name in loaded.problems:
        raise ConfigError(f"agent {name!r} cannot be used: {loaded.problems[name]}")
    spec = loaded.agents.get(name)
    if spec is None:
        raise ConfigError(f"no agent {name!r}; agents: {', '.join(loaded.agents) or 'none'} (orkas agents add …)")
    if spec.backend:
        raise ConfigError(f"{name} is an outside agent ({spec.backend}): use it as a member (--agents {name})")
    return spec


def _group_session(settings: Settings, session_id: str | None) -> bool:
    """Is `session_id` a group conversation (`orkas run --agents` made it)?"""
    if not session_id or not GROUP_ID.match(session_id):
        return False
    return (settings.data_dir / "conversations" / session_id / "state.json").exists()


def _skills(settings: Settings) -> SkillRegistry:
    """Every skill, scanned now; searched by meaning too when the app has indexed them (opened on first use)."""
    registry = skill_registry(settings, background=False)
    folder = settings.data_dir / "kb" / "skills"
    if (folder / "kb.sqlite").exists():
        from orkas.adapter.skill_index import stored

        def embedder() -> Embedder | None:
            try:
                return embedder_for(settings)
            except (OSError, ValueError, OrkasError):
                return None  # keyword search in the index still answers

        registry.meaning = stored(folder, embedder)
    return registry


def _knowledge(settings: Settings) -> tuple[KnowledgeBase | None, KnowledgeBase | None]:
    """The knowledge bases the app built, if any (opened only when they exist: no model load otherwise)."""
    folder = settings.data_dir / "kb"
    documents, conversations = folder / "documents" / "kb.sqlite", folder / "conversations" / "kb.sqlite"
    if not documents.exists() and not conversations.exists():
        return None, None
    from orkas.engine.memory.kb import KnowledgeBase

    try:
        embedder = embedder_for(settings)
    except (OSError, ValueError, OrkasError) as e:
        print(f"orkas: meaning search is off ({e}); keyword search still works", file=sys.stderr)
        embedder = None
    return (
        KnowledgeBase.open(documents.parent, embedder=embedder) if documents.exists() else None,
        KnowledgeBase.open(conversations.parent, embedder=embedder) if conversations.exists() else None,
    )

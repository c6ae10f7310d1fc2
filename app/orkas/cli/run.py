"""`orkas run`: one message through a conversation — the same runtime the window and the phone drive.

A new conversation, or one continued with `--session ID` (its id; a chat made in the window works too). The
conversation runs as one agent (Orkas, or the named agent `--agent NAME` binds it to) or as a group (`--agents
a,b`: the commander with those members). The command is a headless view of the conversation: it subscribes to
its event stream and prints the wire — `--json` prints every event exactly as the window's socket carries it
(`v`, `seq`, `conversation`, `type`, `actor` in a group), one per line; text mode streams the answer (a group's
bubbles as `name: text`) and says tool calls on stderr. When a tool needs consent it asks on the terminal (the
question on stderr, the answer from stdin); without a terminal to ask (a script, a pipe) the answer is no, said
as such on the wire and on stderr — the tool is not run.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orkas.app import Settings, embedder_for, load_configured, settings_from_env, skill_registry
from orkas.app.agents import RunLimits
from orkas.app.assembly import Assembly, Knowledge
from orkas.cli.consent import TerminalConsent
from orkas.core.errors import ConfigError, NotFound, OrkasError
from orkas.core.logging import since_start
from orkas.core.paths import sessions_dir

if TYPE_CHECKING:
    from orkas.adapter.conversations.runtime import ConversationRuntime
    from orkas.adapter.conversations.store import Conversation
    from orkas.adapter.skills.roots import SkillRegistry
    from orkas.engine.memory.embedders import Embedder
    from orkas.engine.memory.kb import KnowledgeBase
    from orkas.team.agents import AgentSpec

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ABORTED = 0, 1, 2, 130
log = logging.getLogger(__name__)


def _check(args: argparse.Namespace) -> None:
    if not _visible(args.prompt):  # an unset $PROMPT in a script: no empty message sent, no "Untitled chat" made
        raise ConfigError("the message is empty: say what you want done")
    if args.model is not None and not args.model.strip():  # an unset $MODEL: not the default model, silently
        raise ConfigError("--model needs a model (provider/model, e.g. anthropic/claude-sonnet-4-5)")
    if args.max_tool_loops < 1:
        raise ConfigError("--max-tool-loops must be at least 1")
    if args.retries < 0:
        raise ConfigError("--retries must not be negative")
    if args.context_window is not None and args.context_window < 1024:
        raise ConfigError("--context-window must be at least 1024 tokens")
    if args.agent is not None and args.agents is not None:
        raise ConfigError("--agent binds a conversation to one agent; --agents makes a group: use one of them")
    if args.agent is not None and "," in args.agent:
        raise ConfigError(f"--agent names one agent; for a group of {args.agent!r} use --agents")
    if args.agents is not None and not [n for n in args.agents.split(",") if n.strip()]:
        raise ConfigError("--agents needs at least one agent's name (orkas agents list)")


def _visible(text: str) -> bool:
    """Some character that shows: spaces, zero-width and control characters alone are nothing to send."""
    return any(not ch.isspace() and unicodedata.category(ch) not in ("Cf", "Cc", "Zs") for ch in text)


async def run_command(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.cli.output import JsonPrinter, TextPrinter

    _check(args)
    settings = settings_from_env(env)
    configured = load_configured(settings)
    for problem in configured.problems:
        print(f"orkas: {problem}", file=sys.stderr)
    limits = RunLimits(args.max_tool_loops, args.retries, args.context_window)
    assembly = Assembly(
        settings, knowledge=_knowledge(settings), skills=_skills(settings), limits=limits, model=args.model
    )
    if assembly.rules.problem:
        print(f"orkas: {assembly.rules.problem}", file=sys.stderr)
    try:
        conversation = _conversation(assembly, args)
        try:
            await _prepare(assembly, conversation, args)
        except BaseException:
            if not args.session:  # nothing was said in it: no empty "Untitled chat" left behind
                assembly.store.discard(conversation.id)
            raise
        if not args.session and not args.json:
            print(f"orkas: session {conversation.id} (continue it with --session {conversation.id})", file=sys.stderr)
        if sys.stdin.isatty() and not args.json:  # without a terminal, never trusted on its own (nor read here)
            status = assembly.instructions.status(conversation)
            if status.files and status.trust == "unanswered":
                from orkas.cli.trust import ask_at_terminal

                ask_at_terminal(assembly.trust, status)
        runtime = assembly.runtime(mode=args.mode)
        printer = JsonPrinter(sys.stdout) if args.json else TextPrinter(sys.stdout, sys.stderr)
        return await _drive(runtime, conversation, args.prompt, printer, attended=sys.stdin.isatty())
    finally:
        await assembly.close()  # local MCP servers end with the command


def _conversation(assembly: Assembly, args: argparse.Namespace) -> Conversation:
    """The conversation this command continues (`--session ID`), or a new one in the workspace."""
    store = assembly.store
    workspace: Path = (args.workspace or Path.cwd()).absolute()  # a relative --workspace is from here
    if args.session is not None and not args.session.strip():  # an unset $ID in a script: not a new chat
        raise ConfigError("--session needs a conversation's id (leave it out to start a new conversation)")
    if not args.session:
        return store.create(workspace=workspace)
    try:  # a continued conversation keeps its folder unless the command names another
        conversation = store.place(args.session, args.workspace) if args.workspace else store.get(args.session)
    except NotFound:
        conversation = _adopt(assembly, args.session, workspace)
    if store.running_elsewhere(conversation.id):  # refused before any repair is said (none was made)
        raise store.busy(conversation.id)
    session, report = store.session(conversation.id)  # repaired now, and said so
    session.close()
    if report is not None and report.changed:
        print(f"orkas: repaired session {conversation.id}: {_summary(report.as_dict())}", file=sys.stderr)
    return conversation


def _adopt(assembly: Assembly, session_id: str, workspace: Path) -> Conversation:
    """A session an older `orkas run` kept elsewhere: a group's folder without metadata, or a transcript in
    `<data>/sessions/` (moved into the conversations, with the agent it was bound to)."""
    folder = assembly.store.root / session_id
    legacy = sessions_dir(assembly.settings.data_dir) / f"{session_id}.jsonl"
    if (folder / "state.json").exists():
        return assembly.store.adopt(session_id, workspace)
    if legacy.exists() and not folder.exists():
        bound = legacy.with_suffix(".agent")
        agent = bound.read_text().strip() if bound.is_file() else ""
        conversation = assembly.store.adopt(session_id, workspace, legacy=legacy, agent=agent)
        bound.unlink(missing_ok=True)
        return conversation
    raise ConfigError(f"no session {session_id!r} (orkas run without --session starts one)")


async def _prepare(assembly: Assembly, conversation: Conversation, args: argparse.Namespace) -> None:
    """Bind the agent or set the members the command names, and say a configuration mistake (no provider, a bad
    model, an unknown agent) before anything is sent."""
    if args.agent is not None:
        spec = _bound_agent(assembly, args.agent)
        conversation = assembly.store.tune(conversation.id, {"agent": spec.name})
    wanted = list(dict.fromkeys(n.strip() for n in (args.agents or "").split(",") if n.strip()))  # each once
    if wanted:
        _known(assembly, wanted)
        assembly.groups.set_members(conversation.id, wanted)
    if assembly.is_group(conversation.id):
        assembly.groups.check(conversation)
        return
    assembly.prepare(conversation)  # the run uses the agent built here
    if conversation.agent and not args.json:
        print(f"orkas: {conversation.agent} answers (and learns, when learning is on)", file=sys.stderr)


async def _drive(
    runtime: ConversationRuntime, conversation: Conversation, prompt: str, printer: Any, *, attended: bool
) -> int:
    """Send the message and print the conversation's events until its run is idle again. `attended`: a person is
    at the terminal to answer consent questions (else each is a no, said as unattended)."""
    after = runtime.snapshot(conversation.id).after
    backlog, queue = runtime.subscribe(conversation.id, after)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, runtime.stop, conversation.id)
    consent = TerminalConsent(runtime, conversation.id, attended=attended)
    last: dict[str, Any] | None = None
    try:
        runtime.send(conversation.id, prompt)
        for event in backlog:
            printer.show(event)
        first = True
        while True:
            event = await queue.get()
            if first:  # once: the first event's arrival (a helper found it logged on every event before the end)
                log.info("run: conversation %s started after %.0f ms", conversation.id, since_start() * 1000)
                first = False
            printer.show(event)
            kind = event["type"]
            if kind == "permission_request":
                consent.on(event)
            if kind in ("done", "error", "turn_end", "message_not_sent"):
                last = event
            if kind == "idle":
                break
    finally:
        consent.close()
        runtime.unsubscribe(conversation.id, queue)
        await runtime.settle()  # each run's learning signals written before the command ends
        await runtime.shutdown()
    log.info(
        "run: conversation %s ended (%s) after %.0f ms", conversation.id, last and last["type"], since_start() * 1000
    )
    return _exit_code(last)


def _exit_code(last: dict[str, Any] | None) -> int:
    if last is None:
        return EXIT_FAILED
    kind = last["type"]
    if kind == "done" or (kind == "turn_end" and last["ok"]):
        return EXIT_OK
    if last.get("aborted") or (kind == "error" and last.get("kind") == "aborted"):
        return EXIT_ABORTED
    if kind == "turn_end" and last.get("message"):
        print(f"orkas: {last['message']}", file=sys.stderr)
    if kind == "message_not_sent":
        print(f"orkas: {last['reason']}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_FAILED


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


def _bound_agent(assembly: Assembly, name: str) -> AgentSpec:
    """`--agent NAME`: the named agent answers this conversation directly (and learns from it, when learning is
    on). Raises `ConfigError` for an agent that does not exist, is broken, or is an outside CLI."""
    if not name.strip():
        raise ConfigError("--agent needs an agent's name (orkas agents list)")
    loaded = assembly.agents.load()
    if name in loaded.problems:
        raise ConfigError(f"agent {name!r} cannot be used: {loaded.problems[name]}")
    spec = loaded.agents.get(name)
    if spec is None:
        raise ConfigError(f"no agent {name!r}; agents: {', '.join(loaded.agents) or 'none'} (orkas agents add …)")
    if spec.backend:
        raise ConfigError(f"{name} is an outside agent ({spec.backend}): use it as a member (--agents {name})")
    return spec


def _known(assembly: Assembly, names: list[str]) -> None:
    loaded = assembly.agents.load()
    for name in names:
        if name in loaded.problems:
            raise ConfigError(f"agent {name!r} cannot be used: {loaded.problems[name]}")
        if name not in loaded.agents:
            raise ConfigError(f"no agent {name!r}; agents: {', '.join(loaded.agents) or 'none'} (orkas agents add …)")


def _skills(settings: Settings) -> SkillRegistry:
    """Every skill, scanned when the first turn's prompt is built (after run_start); searched by meaning too when the
    app has indexed them (opened on first use)."""
    registry = skill_registry(settings, background=False, scan=False)
    folder = settings.data_dir / "kb" / "skills"
    if (folder / "kb.sqlite").exists():
        from orkas.adapter.skills.index import stored

        def embedder() -> Embedder | None:
            try:
                return embedder_for(settings)
            except (OSError, ValueError, OrkasError):
                return None  # keyword search in the index still answers

        registry.meaning = stored(folder, embedder)
    return registry


def _knowledge(settings: Settings) -> Knowledge:
    """The knowledge bases the app built, if any (opened only when they exist: no model load otherwise)."""
    folder = settings.data_dir / "kb"
    documents, conversations = folder / "documents" / "kb.sqlite", folder / "conversations" / "kb.sqlite"
    if not documents.exists() and not conversations.exists():
        return Knowledge()
    from orkas.engine.memory.kb import KnowledgeBase

    try:
        embedder = embedder_for(settings)
    except (OSError, ValueError, OrkasError) as e:
        print(f"orkas: meaning search is off ({e}); keyword search still works", file=sys.stderr)
        embedder = None
    opened: dict[Path, KnowledgeBase] = {}

    def opener(path: Path) -> Any:
        def open_it() -> KnowledgeBase:
            if path not in opened:
                opened[path] = KnowledgeBase.open(path, embedder=embedder)
            return opened[path]

        return open_it if (path / "kb.sqlite").exists() else None

    return Knowledge(opener(documents.parent), opener(conversations.parent))

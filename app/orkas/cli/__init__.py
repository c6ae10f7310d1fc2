"""`orkas` command-line entry points.

    orkas run "prompt" [--session ID] [--model provider/model] [--workspace DIR] [--json] …
    orkas session list [--json]
    orkas session repair PATH [--json] [--dry-run]

Text mode streams the answer to stdout and one line per tool call (and per retry) to stderr, so
`orkas run … > answer.md` keeps only the answer. `--json` prints one JSON object per event per line.
Exit status: 0 done, 1 the run failed, 2 bad usage or configuration, 130 stopped by the user.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from orkas import __version__
from orkas.adapter.settings.data_format import DataTooNew
from orkas.adapter.settings.data_format import prepare as prepare_data
from orkas.core.errors import ConfigError
from orkas.core.fsutil import keep_private
from orkas.core.paths import data_dir, make_private

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ABORTED = 0, 1, 2, 130
log = logging.getLogger("orkas")


def main(argv: Sequence[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    # `orkas` alone opens the window: its frame paints sooner without the ~60 ms of building every command's parser
    # (and importing what some of them need) first.
    args = argparse.Namespace(command=None) if not given else _parser().parse_args(given)
    if args.command == "bridge":  # an external agent's MCP server: stdout is its channel, the data folder not its
        from orkas.cli import bridge as bridge_cli

        try:
            return bridge_cli.run(os.environ)
        except ConfigError as e:
            print(f"orkas: {e}", file=sys.stderr)
            return EXIT_USAGE
    if args.command == "update" and args.update_command == "probe":  # asked by an update, before any data is opened
        from orkas.cli import update as update_cli

        return update_cli.probe()
    keep_private()  # data, caches and indexes are the owner's alone; commands get the person's umask back
    folder = data_dir(os.environ.get("ORKAS_HOME"))
    try:
        make_private(folder)
    except OSError as e:
        print(f"orkas: cannot use the data folder {folder}: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        prepare_data(folder)  # before anything opens it: a newer layout is left untouched
    except DataTooNew as e:
        print(f"orkas: {e}", file=sys.stderr)
        return EXIT_USAGE
    _start_logging(folder, args.command or "window")
    if args.command not in ("vault", "session", "agents", "skills", "packages", "update", "schedule"):
        from orkas.cli.vault import unlock_if_protected

        problem = unlock_if_protected(folder, os.environ)
        if problem:
            print(f"orkas: {problem}", file=sys.stderr)
            return EXIT_USAGE
    try:
        if args.command == "run":
            import asyncio  # here, not above: the window's frame paints before the event loop's ~18 ms of imports

            from orkas.cli.run import run_command

            return asyncio.run(run_command(args, os.environ))
        if args.command == "session" and args.session_command == "repair":
            return _repair(args)
        if args.command == "session" and args.session_command == "list":
            return _sessions(args)
        if args.command == "session" and args.session_command in ("checkpoints", "rewind"):
            from orkas.cli import rewind as rewind_cli

            return rewind_cli.run(args, os.environ)
        if args.command == "status":
            return _status()
        if args.command == "diagnostics":
            return _diagnostics(args)
        if args.command == "rules":
            return _rules(args)
        if args.command == "serve":
            from orkas.cli import serve as serve_cli

            return serve_cli.serve(args, os.environ, given)
        if args.command == "update":
            from orkas.cli import update as update_cli

            return update_cli.run(args, os.environ)
        if args.command == "schedule":
            from orkas.cli import schedule as schedule_cli

            return schedule_cli.run(args, os.environ)
        if args.command is None:
            return _desktop()
        if args.command == "kb":
            from orkas.cli import kb as kb_cli

            return kb_cli.run(args, os.environ)
        if args.command in ("usage", "budget"):
            from orkas.cli import money

            return money.usage(args, os.environ) if args.command == "usage" else money.budget(args, os.environ)
        if args.command == "providers":
            from orkas.cli import providers as providers_cli

            return providers_cli.run(args, os.environ)
        if args.command == "vault":
            from orkas.cli import vault as vault_cli

            return vault_cli.run(args, os.environ)
        if args.command == "agents":
            from orkas.cli import agents as agents_cli

            return agents_cli.run(args, os.environ)
        if args.command == "skills":
            from orkas.cli import skills as skills_cli

            return skills_cli.run(args, os.environ)
        if args.command == "packages":
            from orkas.cli import packages as packages_cli

            return packages_cli.run(args, os.environ)
        if args.command == "evolve":
            from orkas.cli import evolve as evolve_cli

            return evolve_cli.run(args, os.environ)
        if args.command == "memory":
            from orkas.cli import memory as memory_cli

            return memory_cli.run(args, os.environ)
        if args.command == "mcp":
            from orkas.cli import mcp as mcp_cli

            return mcp_cli.run(args, os.environ)
        if args.command == "trust":
            from orkas.cli import trust as trust_cli

            return trust_cli.run(args, os.environ)
    except ConfigError as e:
        print(f"orkas: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `orkas … | head`: the reader has what it wanted; nothing more is written, nothing failed
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    _parser().print_help()
    return EXIT_OK


def _start_logging(folder: Path, process: str) -> None:
    """Every process of the app logs to `<data>/logs` (redacted) and keeps crash reports on the machine."""
    from orkas.core.crashes import CrashReports, install_crash_hooks
    from orkas.core.logging import LEVELS, setup_logging

    try:
        preferences = json.loads((folder / "settings.json").read_text(encoding="utf-8")).get("preferences") or {}
        setting = preferences.get("log_level")
    except (OSError, ValueError, AttributeError):
        setting = None  # no settings yet, or unreadable: the commands that need them say so
    try:
        setup_logging(folder, process=process, env=os.environ, setting=setting if isinstance(setting, str) else None)
    except OSError as e:  # a read-only data folder must not stop the app; the terminal still gets warnings
        print(f"orkas: cannot write logs in {folder / 'logs'}: {e.strerror or e}", file=sys.stderr)
    wanted = os.environ.get("ORKAS_LOG_LEVEL")
    if wanted and wanted.strip().lower() not in LEVELS:
        print(f"orkas: ORKAS_LOG_LEVEL must be one of {', '.join(LEVELS)}, not {wanted!r}; ignored", file=sys.stderr)
    install_crash_hooks(CrashReports(folder / "crashes", process=process))
    log.info("orkas %s (%s) started: python %s, %s", __version__, process, sys.version.split()[0], sys.platform)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="orkas", description="Orkas: a local-first AI agent workspace.")
    parser.add_argument("--version", action="version", version=f"orkas {__version__}")
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser("run", help="run one prompt through the agent and stream the answer")
    run.add_argument("prompt", help="what you want done")
    run.add_argument("--session", help="continue this session (its id); default: a new session")
    run.add_argument("--model", help="provider/model, or a bare model name routed by its prefix")
    run.add_argument(
        "--workspace",
        type=Path,
        help="the folder the agent works in (default: here for a new conversation; its own for a continued one)",
    )
    run.add_argument("--json", action="store_true", help="print one JSON object per event per line")
    run.add_argument(
        "--agents", help="a group conversation: the commander with these member agents (comma-separated names)"
    )
    run.add_argument(
        "--agent",
        help="bind the conversation to this named agent: it answers directly (and learns, when learning is on)",
    )
    run.add_argument("--max-tool-loops", type=int, default=100, help="stop after this many tool rounds")
    run.add_argument("--retries", type=int, default=3, help="retries of a failed model call (default 3)")
    run.add_argument(
        "--context-window", type=int, help="the model's context window in tokens (overrides the catalogue)"
    )
    run.add_argument(
        "--mode",
        choices=["ask", "auto", "plan"],
        default="ask",
        help="ask: changes need approval (default); auto: changes inside the workspace run without asking; "
        "plan: read-only",
    )
    commands.add_parser("status", help="what is configured: providers, model, data folder, sandbox")
    diagnostics = commands.add_parser(
        "diagnostics", help="write a zip to attach to a bug report: versions, logs, crash reports — no secrets"
    )
    diagnostics.add_argument("--out", type=Path, help="where to write the zip (default: <data>/diagnostics/)")
    diagnostics.add_argument(
        "--check-providers", action="store_true", help="also call each configured provider to check its keys"
    )
    from orkas.cli import providers as providers_cli

    providers_cli.add_parser(commands)
    from orkas.cli import money

    money.add_parsers(commands)
    from orkas.cli import agents as agents_cli

    agents_cli.add_parser(commands)
    from orkas.cli import skills as skills_cli

    skills_cli.add_parser(commands)
    from orkas.cli import packages as packages_cli

    packages_cli.add_parser(commands)
    from orkas.cli import evolve as evolve_cli
    from orkas.cli import memory as memory_cli

    evolve_cli.add_parser(commands)
    memory_cli.add_parser(commands)
    from orkas.cli import mcp as mcp_cli

    mcp_cli.add_parser(commands)
    from orkas.cli import trust as trust_cli

    trust_cli.add_parser(commands)
    commands.add_parser(
        "bridge", help="(started by Orkas for an external agent) the stdio MCP server that reaches this run's Orkas"
    )
    from orkas.cli import serve as serve_cli

    serve_cli.add_parser(commands)
    from orkas.cli import update as update_cli

    update_cli.add_parser(commands)
    from orkas.cli import schedule as schedule_cli

    schedule_cli.add_parser(commands)
    from orkas.cli import kb as kb_cli

    kb_cli.add_parser(commands)
    from orkas.cli import vault as vault_cli

    vault_cli.add_parser(commands)
    rules = commands.add_parser("rules", help="list or remove 'always allow' approvals")
    rules.add_argument("action", nargs="?", choices=["list", "remove"], default="list")
    rules.add_argument("key", nargs="?", help="with remove: the rule's key, e.g. 'bash:pytest'")
    rules.add_argument("--workspace", type=Path, help="with remove: only in this workspace")
    session = commands.add_parser("session", help="inspect and repair saved sessions")
    session_commands = session.add_subparsers(dest="session_command")
    listing = session_commands.add_parser("list", help="the conversations: id, last active, title, folder")
    listing.add_argument("--json", action="store_true", help="one JSON object per conversation")
    repair = session_commands.add_parser("repair", help="load a transcript, repair it and report what was fixed")
    repair.add_argument("path", type=Path, help="a session's .jsonl file")
    repair.add_argument("--json", action="store_true", help="print the report as JSON")
    repair.add_argument("--dry-run", action="store_true", help="report only; leave the file as it is")
    from orkas.cli import rewind as rewind_cli

    rewind_cli.add_parsers(session_commands)
    return parser


def _rules(args: argparse.Namespace) -> int:
    from orkas.adapter.settings.permission_rules import RuleStore
    from orkas.core.paths import data_dir

    store = RuleStore(data_dir(os.environ.get("ORKAS_HOME")) / "permission_rules.json")
    if args.action == "remove":
        if not args.key:
            raise ConfigError("rules remove needs the rule's key (see `orkas rules`)")
        workspace = args.workspace.resolve() if args.workspace else None
        removed = store.remove(args.key, workspace)
        print(f"removed {len(removed)} rule(s) for {args.key!r}")
        return EXIT_OK if removed else EXIT_FAILED
    rules = store.load()
    if store.problem:
        print(f"orkas: {store.problem}", file=sys.stderr)
    for rule in rules:
        print(f"{rule.key}\t{rule.workspace}")
    if not rules:
        print("no 'always allow' rules")
    return EXIT_OK


def _desktop() -> int:
    """`orkas` with no command: the desktop window (a display is needed; `orkas serve` works without one)."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        print("orkas: no display to open a window on; run `orkas serve` and open its URL in a browser", file=sys.stderr)
        return EXIT_USAGE
    import importlib.util

    if importlib.util.find_spec("webview") is None:
        print("orkas: the desktop window needs pywebview and PySide6 (scripts/setup.sh installs them)", file=sys.stderr)
        return EXIT_USAGE
    from orkas.desktop.system_libs import advice, missing_libraries

    missing = missing_libraries()
    if missing:
        print(f"orkas: {advice(missing)}", file=sys.stderr)
        return EXIT_USAGE
    from orkas.desktop.window import prepare_qt_environment
    from orkas.launch import run_desktop

    prepare_qt_environment(os.environ)  # type: ignore[arg-type]
    report = os.environ.get("ORKAS_DESKTOP_REPORT")
    return run_desktop(dict(os.environ), report=Path(report) if report else None)


def _diagnostics(args: argparse.Namespace) -> int:
    from orkas.app import settings_from_env
    from orkas.diagnose import save_diagnostics

    out = args.out.expanduser() if args.out else None
    if out is not None and out.is_dir():
        from orkas.adapter.settings.diagnostics import default_name

        out = out / default_name()
    try:
        import asyncio

        path = asyncio.run(save_diagnostics(settings_from_env(os.environ), out, check_providers=args.check_providers))
    except OSError as e:
        print(f"orkas: cannot write the diagnostics to {out or 'the data folder'}: {e.strerror or e}", file=sys.stderr)
        return EXIT_FAILED
    print(path)
    print("orkas: nothing was sent; keys, tokens, emails and your home folder's name are redacted", file=sys.stderr)
    return EXIT_OK


def _status() -> int:
    from orkas.app import confinement_report, load_configured, settings_from_env

    settings = settings_from_env(os.environ)
    configured = load_configured(settings)
    configured_names = list(configured.product.providers)
    env_names = [spec.name for spec in settings.providers if spec.name not in configured_names]
    names = ", ".join(configured_names + [f"{n} (environment)" for n in env_names])
    names = names or "none (orkas providers add …, or ANTHROPIC_API_KEY / OPENAI_API_KEY)"
    report = confinement_report(settings, configured)
    timeout = configured.product.preferences.command_timeout
    print(f"providers:     {names}")
    entries = configured.product.entries
    first = f"{entries[0].provider}/{entries[0].model}" if entries else None
    print(f"default model: {settings.model_override or first or settings.default_model or '(none)'}")
    print(f"data folder:   {settings.data_dir}")
    print(f"web search:    {settings.search.kind if settings.search else 'not configured'}")
    if report.kind == "bubblewrap":
        print("sandbox:       bubblewrap: every command is confined")
    else:
        print("sandbox:       NONE: commands are not confined here, so every command that is not a known read asks,")
        why = "ORKAS_SANDBOX=off turned it off" if not settings.confine else "on Linux: install bubblewrap"
        print(f"               even in auto mode ({why})")
    print(f"  files:       {report.files}")
    print(f"  network:     {report.network}")
    print(f"  home:        {report.home}")
    print(f"  sockets:     {report.sockets}")
    print(f"  processes:   {report.processes}")
    print(f"  memory:      {report.memory}")
    print(f"  time:        at most {timeout} s per command")
    if configured.vault is not None:
        print(f"vault key:     {configured.vault.key_source.description}")
    for problem in configured.problems:
        print(f"problem:       {problem}")
    return EXIT_OK


def _sessions(args: argparse.Namespace) -> int:
    """Every conversation not in the recycle bin, the most recently active first (ids for --session)."""
    import time

    from orkas.adapter.conversations.store import ConversationStore

    for c in ConversationStore(data_dir(os.environ.get("ORKAS_HOME"))).recent():
        if args.json:
            print(json.dumps({"id": c.id, "title": c.title, "updated": c.updated, "workspace": c.workspace}))
        else:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.updated))
            print(f"{c.id}\t{when}\t{c.title or '(untitled)'}\t{c.workspace}")
    return EXIT_OK


def _repair(args: argparse.Namespace) -> int:
    from orkas.adapter.conversations.sessions import load

    path: Path = args.path
    if not path.is_file():
        raise ConfigError(f"no such transcript: {str(path)!r}")
    try:
        _session, report = load(path, write_back=not args.dry_run)
    except OSError as e:
        print(f"orkas: cannot read {str(path)!r}: {e.strerror or e}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        print(json.dumps(report.as_dict(), ensure_ascii=False))
        return EXIT_OK
    fixed = report.repair.as_dict()
    print(f"{path}: {report.records} records loaded")
    print(
        f"  torn last record dropped: {report.torn_tail_bytes} bytes" if report.torn_tail_bytes else "  no torn record"
    )
    print(f"  corrupt lines skipped: {len(report.corrupt_lines)}")
    for key in (
        "synthesized_results",
        "dropped_orphan_results",
        "dropped_duplicate_results",
        "dropped_messages",
    ):
        values = fixed[key]
        assert isinstance(values, list)
        if values:
            print(f"  {key.replace('_', ' ')}: {len(values)}")
    print("  file rewritten" if report.rewritten else "  file unchanged")
    return EXIT_OK

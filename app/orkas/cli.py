"""`orkas` command-line entry points.

    orkas run "prompt" [--model provider/model] [--workspace DIR] [--json]

Text mode streams the answer to stdout and one line per tool call (and per retry) to stderr, so
`orkas run … > answer.md` keeps only the answer. `--json` prints one JSON object per event per line.
Exit status: 0 done, 1 the run failed, 2 bad usage or configuration, 130 stopped by the user.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from orkas import __version__
from orkas.app import build_agent, settings_from_env
from orkas.core.errors import ConfigError
from orkas.engine.abort import AbortSignal
from orkas.engine.events import Done, Error, Event, Retry, TextDelta, ToolEnd, ToolStart
from orkas.engine.messages import TextBlock
from orkas.engine.session import InMemorySession

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ABORTED = 0, 1, 2, 130


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command != "run":
        parser.print_help()
        return EXIT_OK
    try:
        return asyncio.run(_run(args))
    except ConfigError as e:
        print(f"orkas: {e}", file=sys.stderr)
        return EXIT_USAGE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="orkas", description="Orkas: a local-first AI agent workspace.")
    parser.add_argument("--version", action="version", version=f"orkas {__version__}")
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser("run", help="run one prompt through the agent and stream the answer")
    run.add_argument("prompt", help="what you want done")
    run.add_argument("--model", help="provider/model, or a bare model name routed by its prefix")
    run.add_argument("--workspace", type=Path, default=Path.cwd(), help="folder the agent may read")
    run.add_argument("--json", action="store_true", help="print one JSON object per event per line")
    run.add_argument("--max-tool-loops", type=int, default=100, help="stop after this many tool rounds")
    run.add_argument("--retries", type=int, default=3, help="retries of a failed model call (default 3)")
    return parser


async def _run(args: argparse.Namespace) -> int:
    if args.max_tool_loops < 1:
        raise ConfigError("--max-tool-loops must be at least 1")
    if args.retries < 0:
        raise ConfigError("--retries must not be negative")
    agent = build_agent(
        settings_from_env(os.environ),
        workspace=args.workspace,
        model=args.model,
        max_tool_loops=args.max_tool_loops,
        retries=args.retries,
    )
    stop = AbortSignal()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.abort, "stopped by the user")
    printer = _JsonPrinter(sys.stdout) if args.json else _TextPrinter(sys.stdout, sys.stderr)
    last: Event | None = None
    try:
        async for event in agent.run(args.prompt, session=InMemorySession(), signal=stop):
            printer.show(event)
            last = event
    finally:
        await agent.providers.aclose()
    if isinstance(last, Done):
        return EXIT_OK
    if isinstance(last, Error) and last.aborted:
        return EXIT_ABORTED
    return EXIT_FAILED


def event_json(event: Event) -> str:
    data: dict[str, Any] = {"type": event.type}
    data.update(
        (f.name, _plain(getattr(event, f.name))) for f in dataclasses.fields(event) if f.name != "type"
    )
    return json.dumps(data, ensure_ascii=False)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class _JsonPrinter:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def show(self, event: Event) -> None:
        self.out.write(event_json(event) + "\n")
        self.out.flush()


class _TextPrinter:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err
        self.mid_line = False
        self.inputs: dict[str, str] = {}

    def show(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.out.write(event.text)
            self.out.flush()
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, ToolStart):
            self.inputs[event.id] = json.dumps(dict(event.input), ensure_ascii=False)[:160]
        elif isinstance(event, ToolEnd):
            self._line(f"• {event.name} {self.inputs.pop(event.id, '')} {_brief(event)}")
        elif isinstance(event, Retry):
            self._line(f"… retrying in {event.wait:.1f}s (attempt {event.attempt}): {event.reason}")
        elif isinstance(event, Done):
            if self.mid_line:
                self.out.write("\n")
            if event.stop_reason == "max_tool_loops":
                self._line(f"(stopped: the limit of {event.tool_loops} tool rounds was reached)")
        elif isinstance(event, Error):
            if self.mid_line:
                self.out.write("\n")
            prefix = "stopped" if event.aborted else "error"
            print(f"orkas: {prefix}: {event.message}", file=self.err, flush=True)

    def _line(self, text: str) -> None:
        if self.mid_line:
            self.out.write("\n")
            self.out.flush()
            self.mid_line = False
        print(text, file=self.err, flush=True)


def _brief(event: ToolEnd) -> str:
    first = next((b.text for b in event.content if isinstance(b, TextBlock)), "")
    summary = first.strip().splitlines()[0][:120] if first.strip() else "(no text)"
    status = "error" if event.is_error else "ok"
    return f"→ {status} in {event.duration * 1000:.0f} ms: {summary}"


if __name__ == "__main__":
    raise SystemExit(main())

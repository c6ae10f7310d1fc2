"""`orkas trust`: which folders' instruction files (AGENTS.md, CLAUDE.md…) may instruct Orkas's agents.

orkas trust add PATH       trust a folder (and the folders in it): its files are instructions from the next turn
orkas trust remove PATH    forget the answer: its files are read as outside data again, and asked about once more
orkas trust list [--json]  the trusted folders

`orkas run` asks once at a terminal, for a folder with instruction files and no answer; without a terminal it never
trusts on its own (the files then reach the model only as outside data).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `orkas --help` builds every parser: nothing heavy at import
    from orkas.adapter.conversations.instructions import Status
    from orkas.adapter.settings.trust import FolderTrust

EXIT_OK, EXIT_FAILED = 0, 1


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    trust = commands.add_parser("trust", help="trust a folder's instruction files (AGENTS.md, CLAUDE.md…), or stop")
    sub = trust.add_subparsers(dest="trust_command", required=True)
    sub.add_parser("add", help="trust a folder and the folders in it").add_argument("path", type=Path)
    sub.add_parser("remove", help="forget a folder's answer: its files are outside data again").add_argument(
        "path", type=Path
    )
    listed = sub.add_parser("list", help="the trusted folders")
    listed.add_argument("--json", action="store_true")


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.adapter.settings.trust import FolderTrust
    from orkas.app import settings_from_env

    trust = FolderTrust(settings_from_env(env).data_dir / "trusted_folders.json")
    if args.trust_command == "add":
        given = trust.set(args.path, "trusted")
        print(f"trusted {given.folder}: its instruction files apply from the next turn")
        return EXIT_OK
    if args.trust_command == "remove":
        folder = args.path.expanduser().resolve()
        if not trust.remove(folder):
            print(f"orkas: {folder} was not trusted (orkas trust list)", file=sys.stderr)
            return EXIT_FAILED
        print(f"{folder} is no longer trusted: its instruction files are read as outside data")
        return EXIT_OK
    listed = trust.trusted()
    if trust.problem:
        print(f"orkas: {trust.problem}", file=sys.stderr)
    if args.json:
        print(json.dumps([{"folder": a.folder, "since": a.at} for a in listed], indent=2, ensure_ascii=False))
    elif not listed:
        print("no trusted folders (orkas trust add PATH)")
    for answered in [] if args.json else listed:
        print(f"{answered.folder}  (since {time.strftime('%Y-%m-%d', time.localtime(answered.at))})")
    return EXIT_OK


def ask_at_terminal(trust: FolderTrust, status: Status) -> None:
    """`orkas run` at a terminal, in a folder with instruction files nobody answered for: asked once, remembered."""
    names = ", ".join(f["path"] for f in status.files)
    print(f"orkas: {status.root} has instruction files: {names}", file=sys.stderr)
    print("orkas: a downloaded repository can carry hostile instructions.", file=sys.stderr)
    print("Use the instructions in this folder? [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        said = sys.stdin.readline().strip().lower()
    except (OSError, KeyboardInterrupt):
        said = ""
    trust.set(status.root, "trusted" if said in ("y", "yes") else "declined")

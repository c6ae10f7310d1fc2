"""`orkas session checkpoints` and `orkas session rewind`: a conversation's checkpoints, and going back to one.

orkas session checkpoints ID [--json]
    the person's messages a rewind can start from, with the files checkpointed before each ran
orkas session rewind ID --to MESSAGE_ID [--files-only | --conversation-only] [--preview] [--json]
    the conversation and its folder as they were before that message (the message and what followed are kept as a
    version; the files as they were just before the rewind, kept too: `--undo` puts them back)
orkas session rewind ID --undo
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Mapping
from typing import Any

EXIT_OK = 0


def add_parsers(session: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    listed = session.add_parser("checkpoints", help="a conversation's checkpoints: what a rewind can go back to")
    listed.add_argument("id", help="the conversation's id")
    listed.add_argument("--json", action="store_true")
    rewind = session.add_parser("rewind", help="the conversation and its files as they were before a message")
    rewind.add_argument("id", help="the conversation's id")
    rewind.add_argument("--to", metavar="MESSAGE_ID", help="one of your messages (orkas session checkpoints ID)")
    only = rewind.add_mutually_exclusive_group()
    only.add_argument("--files-only", action="store_true", help="the files only; the conversation goes on")
    only.add_argument("--conversation-only", action="store_true", help="the conversation only; the files stay")
    only.add_argument("--undo", action="store_true", help="put the files back as they were before the last rewind")
    rewind.add_argument("--preview", action="store_true", help="say what would change; change nothing")
    rewind.add_argument("--json", action="store_true")


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.adapter.conversations.rewinds import Mode
    from orkas.app import settings_from_env
    from orkas.app.assembly import Assembly
    from orkas.core.errors import ConfigError

    runtime = Assembly(settings_from_env(env)).runtime()
    if args.session_command == "checkpoints":
        listed = runtime.checkpoint_list(args.id)
        if args.json:
            print(json.dumps(listed, indent=2, ensure_ascii=False))
        for entry in [] if args.json else listed:
            print(_line(entry))
        if not listed and not args.json:
            print("no message of yours in this conversation yet")
        return EXIT_OK
    if args.undo:
        said = asyncio.run(runtime.undo_rewind(args.id, preview=args.preview))
        _print(said, args.json, args.id, undo=True)
        return EXIT_OK
    if not args.to:
        raise ConfigError("say which message to rewind to: --to MESSAGE_ID (orkas session checkpoints ID lists them)")
    mode: Mode = "files" if args.files_only else "conversation" if args.conversation_only else "both"
    act = runtime.rewind_preview if args.preview else runtime.rewind
    said = asyncio.run(act(args.id, args.to, mode))
    _print(said, args.json, args.id)
    return EXIT_OK


def _line(entry: dict[str, Any]) -> str:
    text = " ".join(str(entry["text"]).split())
    text = text if len(text) <= 60 else text[:59] + "…"
    if entry["checkpoint"] is None:
        kept = "no checkpoint (ran in plan mode, or before checkpoints): conversation only"
    else:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry["at"]))
        kept = f"{when}  {entry['files']} files" + (
            f", {entry['left_out']} too big to keep" if entry["left_out"] else ""
        )
    return f"{entry['message_id']}  {kept}  “{text}”"


def _print(said: dict[str, Any], as_json: bool, conversation: str, *, undo: bool = False) -> None:
    if as_json:
        print(json.dumps(said, indent=2, ensure_ascii=False))
        return
    files = said.get("files")
    done = "" if said.get("applied", True) else "would be "
    if files is not None:
        for key, verb in (("restore", "restored"), ("create", "created"), ("delete", "deleted")):
            for path in files[key]:
                print(f"{done}{verb}: {path}")
        for path in files["cannot"]:
            print(f"cannot restore (too big to keep): {path}", file=sys.stderr)
        for path in files.get("failed", []):
            print(f"left as it is (something else changed it meanwhile): {path}", file=sys.stderr)
        if not (files["restore"] or files["create"] or files["delete"]):
            print("the files are already as they were")
    for warning in said.get("warnings", []):
        print(f"orkas: not undone by a rewind — {warning}", file=sys.stderr)
    if said.get("conversation") is not None and "text" in said:
        print(f"{done}put aside as a version: “{said['text'][:60]}” and what followed")
    if not undo and said.get("applied") and files is not None:
        print(f"undo the files with: orkas session rewind {conversation} --undo", file=sys.stderr)

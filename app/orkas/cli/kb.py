"""`orkas kb add PATH [--watch] | text TITLE | search QUERY | list | remove ID`: the knowledge base
from a terminal. Adding indexes the text at once and embeds it before returning (a progress line on
stderr), so a search right after finds it by meaning too."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orkas.adapter.knowledge.service import KnowledgeService

EXIT_OK, EXIT_FAILED = 0, 1


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    kb = commands.add_parser("kb", help="the knowledge base: add files or folders, search, list, remove")
    actions = kb.add_subparsers(dest="kb_command")
    add = actions.add_parser("add", help="index a file or a folder")
    add.add_argument("path", type=Path)
    add.add_argument("--watch", action="store_true", help="keep a folder in sync while the app runs")
    text = actions.add_parser("text", help="index text read from stdin under a title")
    text.add_argument("title")
    search = actions.add_parser("search", help="search with citations")
    search.add_argument("query")
    search.add_argument("-k", type=int, default=8)
    search.add_argument("--mode", choices=["hybrid", "keyword", "vector"], default="hybrid")
    actions.add_parser("list", help="the documents")
    remove = actions.add_parser("remove", help="remove a document by its id")
    remove.add_argument("doc_id")


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.adapter.knowledge.service import KnowledgeService
    from orkas.app import embedder_for, protected_data, settings_from_env

    settings = settings_from_env(env)
    service = KnowledgeService(
        settings.data_dir / "kb", lambda: embedder_for(settings), lambda: protected_data(settings.data_dir)
    )
    try:
        command = args.kb_command or "list"
        if command == "add":
            report = service.add_path(args.path.expanduser(), watch=args.watch)
            _embed(service)
            print(f"added {report['added']}, unchanged {report['unchanged']}, removed {report['removed']}")
            for path, reason in report["failed"] or []:
                print(f"skipped {path}: {reason}", file=sys.stderr)
            return EXIT_OK
        if command == "text":
            count = service.add_text(f"note/{args.title}", sys.stdin.read(), args.title)
            _embed(service)
            print(f"note/{args.title}: {count} passages")
            return EXIT_OK
        if command == "search":
            hits = service.kb.search(args.query, k=args.k, mode=args.mode)
            for number, hit in enumerate(hits, start=1):
                snippet = " ".join(hit.text.split())[:200]
                print(f"[{number}] {hit.citation}  ({hit.score:.3f})\n    {snippet}")
            return EXIT_OK if hits else EXIT_FAILED
        if command == "remove":
            if not service.remove(args.doc_id):
                print(f"orkas: no document {args.doc_id!r}", file=sys.stderr)
                return EXIT_FAILED
            print(f"removed {args.doc_id}")
            return EXIT_OK
        for document in service.kb.documents():
            print(f"{document['id']}  ({document['chunks']} passages)")
        return EXIT_OK
    except (OSError, ValueError) as e:
        print(f"orkas: {e}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        service.close()


def _embed(service: KnowledgeService) -> None:
    """Embed what was added before exiting, with a progress line (the worker runs only while we do)."""
    total = service.kb.pending()
    while (left := service.kb.pending()) > 0:
        if sys.stderr.isatty():
            print(f"\rembedding {total - left}/{total}", end="", file=sys.stderr, flush=True)
        service.wait_idle(timeout=1)
    if total and sys.stderr.isatty():
        print(f"\rembedded {total} passages", file=sys.stderr)

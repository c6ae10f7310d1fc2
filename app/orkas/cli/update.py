"""`orkas update check|apply`: Settings → About's update, from a terminal.

    orkas update check [--feed URL]   what is installed, what the signed feed offers (exit 0; 1 if it could not say)
    orkas update apply [--feed URL]   download, verify and install the newer version (the portable build's folder
                                      is exchanged; a .deb is handed to apt, with the command to type)

`orkas update probe` is what an update asks of the version it is about to install (its version and data
format, as JSON); it opens no data folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping

from orkas import __version__

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    update = commands.add_parser("update", help="check for a new version of Orkas, or install it")
    actions = update.add_subparsers(dest="update_command", required=True)
    for name, words in (
        ("check", "say what the release feed offers"),
        ("apply", "download, verify and install the newer version"),
    ):
        action = actions.add_parser(name, help=words)
        action.add_argument("--feed", help="read this feed instead of the one in the settings")
    actions.add_parser("probe", help=argparse.SUPPRESS)


def probe() -> int:
    from orkas.adapter.settings.data_format import CURRENT

    print(json.dumps({"version": __version__, "data_format": CURRENT}))
    return EXIT_OK


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.adapter.updates.feed import UpdateError
    from orkas.adapter.updates.install import others_running
    from orkas.app import settings_from_env, updater_for

    settings = settings_from_env(env)
    updater = updater_for(settings, feed=args.feed)
    try:
        newer = updater.check()
        if newer is None:
            print(f"Orkas {__version__} is up to date")
            return EXIT_OK
        size = updater.status()["available"]["size"]
        weight = f" ({size / 1e6:.1f} MB)" if size else ""
        print(f"Orkas {__version__} is installed; {newer.version} is available{weight}")
        if newer.notes.strip():  # signed, but shown as text: no terminal control sequences
            notes = "".join(c for c in newer.notes.strip() if c in "\n\t" or (c.isprintable() and ord(c) >= 32))
            print("\n" + notes + "\n")
        if args.update_command == "check":
            print("install it with `orkas update apply`, or from Settings → About")
            return EXIT_OK
        folder = updater.installed.folder
        if folder is not None:
            running = others_running(folder)
            if running:
                pids = ", ".join(map(str, running))
                print(f"orkas: Orkas is running from {folder} (process {pids}): close it first, or install from "
                      "Settings → About, which restarts it", file=sys.stderr)  # fmt: skip
                return EXIT_FAILED
        print("downloading and checking …", file=sys.stderr)
        prepared = updater.prepare()
    except UpdateError as e:
        print(f"orkas: {e}", file=sys.stderr)
        return EXIT_FAILED
    if prepared.migrates:
        print(f"note: Orkas {prepared.version} moves your data folder to a newer format; earlier versions cannot "
              "open it afterwards")  # fmt: skip
    if prepared.command is not None:
        print(f"downloaded and verified: {prepared.file}\ninstall it with:\n  {prepared.command}")
        return EXIT_OK
    if prepared.staged is None or folder is None:
        print(f"downloaded and verified: {prepared.file}\nopen it to install Orkas {prepared.version}")
        return EXIT_OK
    from orkas.adapter.updates.install import exchange

    try:
        exchange(prepared.staged, folder)
    except (OSError, UpdateError) as e:
        print(f"orkas: the update was not installed ({e}); {__version__} is still in place", file=sys.stderr)
        return EXIT_FAILED
    print(f"Orkas {prepared.version} is installed in {folder}; start it again to use it")
    return EXIT_OK

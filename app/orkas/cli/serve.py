"""`orkas serve [--port P]`: the app's local server without a window, for a browser.

The first line of stdout is the URL to open, with this launch's secret token; the token is printed
there and nowhere else (the server's access log is off, so no URL is ever logged).

`--background` starts it in a session of its own and returns: it goes on when the terminal closes, and fires the
conversations' schedules while it runs (`--stop` ends it). Its pid is kept in `<data>/background.json`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence

EXIT_OK = 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser("serve", help="run the local server without a window and print its URL")
    serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    serve.add_argument("--mirror", action="store_true", help="also serve the phone mirror (TLS, paired phones only)")
    serve.add_argument("--mirror-host", default="0.0.0.0", help="the mirror's address (default: all of this machine's)")
    serve.add_argument("--mirror-port", type=int, default=47615, help="the mirror's port (0: any free port)")
    serve.add_argument(
        "--background",
        action="store_true",
        help="keep serving after this terminal closes (scheduled work fires while it runs); --stop ends it",
    )
    serve.add_argument("--stop", action="store_true", help="stop the Orkas started with --background")


def serve(args: argparse.Namespace, env: Mapping[str, str], argv: Sequence[str] = ()) -> int:
    """`argv`: the command line, for the update that restarts this process into the new version."""
    if args.stop:
        from orkas.cli.background import stop

        return stop(env)
    if args.background:
        from orkas.cli.background import start

        return start(argv, env)
    # Imported here: every other command starts faster without the web stack.
    from orkas.app import settings_from_env
    from orkas.host import host

    mirror = (args.mirror_host, args.mirror_port) if args.mirror else None
    hosted = host(settings_from_env(env), port=args.port, mirror=mirror)
    for problem in hosted.problems:
        print(f"orkas: {problem}", file=sys.stderr)
    print(hosted.url, flush=True)
    if args.mirror and hosted.mirror is not None:  # bound now, so the line is true before anything serves
        hosted.mirror.bind()
        certificate = hosted.mirror.certificate
        print(f"mirror: {hosted.mirror.url} {certificate.fingerprint if certificate else ''}", flush=True)
    hosted.serve_forever()
    hosted.restart_if_installing(argv, env)
    return EXIT_OK

"""`orkas serve [--port P]`: the app's local server without a window, for a browser.

The first line of stdout is the URL to open, with this launch's secret token; the token is printed
there and nowhere else (the server's access log is off, so no URL is ever logged).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

EXIT_OK = 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser("serve", help="run the local server without a window and print its URL")
    serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")


def serve(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    # Imported here: every other command starts faster without the web stack.
    from orkas.app import settings_from_env
    from orkas.host import host

    hosted = host(settings_from_env(env), port=args.port)
    for problem in hosted.problems:
        print(f"orkas: {problem}", file=sys.stderr)
    print(hosted.url, flush=True)
    hosted.serve_forever()
    return EXIT_OK

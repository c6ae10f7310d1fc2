"""`orkas serve [--port P]`: the app's local server without a window, for a browser.

The first line of stdout is the URL to open, with this launch's secret token; the token is printed
there and nowhere else (the server's access log is off, so no URL is ever logged).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import socket
import sys
from collections.abc import Mapping

EXIT_OK = 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser("serve", help="run the local server without a window and print its URL")
    serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")


def serve(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    # Imported here: every other command starts faster without the web stack.
    import uvicorn

    from orkas.adapter.conversations import Conversation, ConversationStore
    from orkas.adapter.runtime import ConversationRuntime
    from orkas.app import build_agent, load_configured, settings_from_env
    from orkas.engine.runner import Agent
    from orkas.server.app import create_app

    settings = settings_from_env(env)
    configured = load_configured(settings)
    for problem in configured.problems:
        print(f"orkas: {problem}", file=sys.stderr)
    names = list(configured.product.providers) + [s.name for s in settings.providers]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(64)
    port = listener.getsockname()[1]
    token = secrets.token_urlsafe(32)

    def make_agent(conversation: Conversation) -> Agent:
        return build_agent(
            settings,
            workspace=conversation.workspace_path,
            model=None,
            configured=configured,
            granted=conversation.granted,
        )

    runtime = ConversationRuntime(ConversationStore(settings.data_dir), make_agent)
    app = create_app(token=token, port=port, runtime=runtime, providers=list(dict.fromkeys(names)))
    print(f"http://127.0.0.1:{port}/?token={token}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    asyncio.run(server.serve(sockets=[listener]))
    return EXIT_OK

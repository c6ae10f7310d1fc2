"""`orkas mcp`: the MCP servers the person adds (connectors).

    orkas mcp add NAME --url URL [--header K=V]…                          a remote server (https, or http here)
    orkas mcp add NAME --url URL --oauth                                  one that signs in with OAuth: signs in now
    orkas mcp login NAME [--timeout S]                                    sign in (again): prints the page to open;
                                                                          the browser comes back to this machine
    orkas mcp logout NAME                                                 revoked there (when it can), forgotten here
    orkas mcp add NAME --command "CMD ARGS…" [--env K=V]… [--cwd DIR] [--folder DIR]… [--unconfined] [--yes]
                                                                          a local one: the exact command is shown
                                                                          and must be confirmed; it runs confined
                                                                          (network on, its folder and each --folder,
                                                                          a private home) unless --unconfined
    orkas mcp list [--json] [--check]                                     status, tool count, last error as last
                                                                          measured; --check reaches each server now
                                                                          (one in back-off is not retried)
    orkas mcp tools NAME [--json]                                         its tools, reached now (back-off or not)
    orkas mcp remove NAME | enable NAME | disable NAME
    orkas mcp import FILE [--yes]                                         a Claude-Desktop-style {"mcpServers": …}

Header and env values, and a sign-in's tokens, go into the vault only; `connectors.json` keeps their names.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orkas.core.errors import ConfigError, ToolInputError

if TYPE_CHECKING:
    from orkas.app import Settings
    from orkas.engine.tools.connectors import RemoteTool, ServerTools

EXIT_OK, EXIT_FAILED = 0, 1


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser(
        "mcp", help="MCP servers (connectors): add, list, login, logout, remove, enable, disable, import"
    )
    sub = mcp.add_subparsers(dest="mcp_command", required=True)
    add = sub.add_parser("add", help="add a remote (--url) or local (--command) MCP server")
    add.add_argument("name")
    add.add_argument("--url")
    add.add_argument("--header", action="append", default=[], metavar="K=V", help="kept in the vault")
    add.add_argument("--command", dest="server_command", help="the server's command line, for a local server")
    add.add_argument("--env", action="append", default=[], metavar="K=V", help="kept in the vault")
    add.add_argument("--cwd")
    add.add_argument(
        "--folder",
        action="append",
        default=[],
        metavar="DIR",
        help="(local) a folder of yours it may read and write (confined servers see nothing else)",
    )
    add.add_argument(
        "--unconfined", action="store_true", help="(local) run it outside the sandbox, with all your permissions"
    )
    add.add_argument("--oauth", action="store_true", help="(remote) it signs in with OAuth: sign in now")
    add.add_argument("--timeout", type=float, default=300.0, help="seconds to finish signing in (--oauth)")
    add.add_argument("--yes", action="store_true", help="run this local command without asking (scripts)")
    listing = sub.add_parser("list", help="the connectors: status, tool count, last error")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--check", action="store_true", help="reach each enabled server now")
    tools = sub.add_parser("tools", help="a connector's tools (reached now)")
    tools.add_argument("name")
    tools.add_argument("--json", action="store_true")
    for verb, text in (("remove", "delete it and its secrets"), ("enable", "use it"), ("disable", "keep it, unused")):
        sub.add_parser(verb, help=text).add_argument("name")
    login = sub.add_parser("login", help="sign in to a remote server with OAuth (again)")
    login.add_argument("name")
    login.add_argument("--timeout", type=float, default=300.0, help="seconds to finish signing in")
    sub.add_parser("logout", help="sign out of a remote server: revoked there, forgotten here").add_argument("name")
    imported = sub.add_parser("import", help='add the servers of a {"mcpServers": …} file')
    imported.add_argument("file", type=Path)
    imported.add_argument("--yes", action="store_true", help="accept every local command without asking")


def _confirm(argv: list[str], yes: bool, *, unconfined: bool = False, folders: Sequence[str] = ()) -> None:
    """A local server runs a program on this machine: the person sees the exact command, and how it is confined,
    and says yes."""
    shown = shlex.join(argv)
    if yes:
        return
    if not sys.stdin.isatty():
        raise ConfigError(f"a local server runs `{shown}` on this computer: confirm in a terminal, or pass --yes")
    if unconfined:
        how = "UNCONFINED, with all your permissions (your files, your keys, your network)"
    else:
        from orkas.adapter.connectors.config import command_folders

        seen = ", ".join(folders) if folders else "no folder of yours"
        needed = ", ".join(str(f) for f in command_folders(argv))
        how = f"confined: network on, a private home, and {seen}" + (
            f"\n  (and, read-only, what it needs to start: {needed})" if needed else ""
        )
    answer = input(f"This connector will run, on this computer:\n  {shown}\n  {how}\nAdd it? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        raise ConfigError("not added")


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.adapter.connectors.config import Connectors, claude_desktop_entries, parse_pairs
    from orkas.adapter.settings.vault import Vault
    from orkas.app import settings_from_env

    settings = settings_from_env(env)
    vault = Vault.at(settings.data_dir)
    connectors = Connectors(settings.data_dir / "connectors.json", vault)
    command = args.mcp_command
    if command == "add":
        headers, values = parse_pairs(args.header, "header"), parse_pairs(args.env, "env")
        if args.server_command is not None:
            argv = shlex.split(args.server_command)
            if argv and args.url is None:
                _confirm(argv, args.yes, unconfined=args.unconfined, folders=args.folder)
        added = connectors.add(
            args.name,
            url=args.url,
            command=args.server_command,
            headers=headers,
            env=values,
            cwd=args.cwd,
            oauth=args.oauth,
            unconfined=args.unconfined,
            folders=args.folder,
        )
        confinement = "" if added.url else (", confined" if added.confined else ", unconfined")
        print(f"added {added.id} ({added.kind}{confinement})", flush=True)
        if added.oauth and _login(settings, vault, added, args.timeout) != EXIT_OK:
            print(f"it is added, not signed in: `orkas mcp login {added.name}` signs in", file=sys.stderr)
            return EXIT_FAILED
    elif command == "login":
        connector = connectors.get(args.name)
        if connector.url is None:
            raise ConfigError(f"{connector.name} is a local server: it is started, not signed in to")
        if not connector.oauth:  # a remote server that turned out to want a sign-in
            connector = connectors.set_oauth(connector.id, True)
        return _login(settings, vault, connector, args.timeout)
    elif command == "logout":
        from orkas.adapter.connectors.signin import sign_out

        connector = connectors.get(args.name)
        print(asyncio.run(sign_out(connector, vault)))
        from orkas.adapter.connectors.health import HealthFile
        from orkas.adapter.connectors.signin import SIGNED_OUT

        health = HealthFile(settings.data_dir / "connector-health.json")
        health.needs_signin(connector.id, SIGNED_OUT.format(name=connector.name))
    elif command == "list":
        rows = asyncio.run(_checked(settings, args.check))
        if args.json:
            print(json.dumps(rows, indent=2, ensure_ascii=False))
        elif not rows:
            print("no connectors")
        for row in [] if args.json else rows:
            where = row["url"] or shlex.join(row["command"])
            if not row["url"]:
                where += "  [confined]" if row["confined"] else "  [unconfined: runs with your permissions]"
            tools = "?" if row["tools"] is None else row["tools"]
            print(
                f"{row['name']}  {row['kind']:<6} {'on ' if row['enabled'] else 'off'}  "
                f"{row['status']:<12} {tools} tools  {where}"
            )
            if row["status"] == "signin":
                print(f"    {row['last_error'] or 'needs a sign-in'}")
            elif row["last_error"] and row["status"] in ("degraded", "error"):
                retry = f" (next try in {row['retry_in']} s)" if row["retry_in"] else ""
                print(f"    last error: {row['last_error']}{retry}")
    elif command == "tools":
        listing = asyncio.run(_tools(settings, args.name))
        if listing.error:
            raise ConfigError(f"{listing.server}: {listing.error}")
        if args.json:
            print(json.dumps([_tool_row(t) for t in listing.tools], indent=2, ensure_ascii=False))
        for tool in [] if args.json else listing.tools:
            mark = (
                " [read-only, stays here]" if tool.runs_unasked else ("" if tool.closed_world else " [asks: may leave]")
            )
            print(f"{tool.name}{mark}  {' '.join(tool.description.split())[:200]}")
    elif command == "remove":
        print(f"removed {connectors.remove(args.name).id}")
    elif command in ("enable", "disable"):
        changed = connectors.set_enabled(args.name, command == "enable")
        if changed.enabled:  # the person turned it back on: try it at once, whatever the back-off said
            from orkas.adapter.connectors.health import HealthFile

            HealthFile(settings.data_dir / "connector-health.json").reset(changed.id)
        print(f"{changed.id}: {'enabled' if changed.enabled else 'disabled'}")
    elif command == "import":
        try:
            entries = claude_desktop_entries(args.file.read_text(encoding="utf-8"))
        except OSError as e:
            raise ConfigError(f"cannot read {args.file}: {e.strerror}") from None
        for entry in entries:
            _import_one(connectors, entry, args.yes)
    return EXIT_OK


def _login(settings: Settings, vault: Any, connector: Any, timeout: float) -> int:
    """The person's sign-in from a terminal: the page is printed (a terminal cannot open their browser for them
    everywhere, and must not pick one), the browser comes back to a port on 127.0.0.1, the tokens go to the vault."""
    from orkas import __version__
    from orkas.adapter.connectors.health import HealthFile
    from orkas.adapter.connectors.signin import sign_in
    from orkas.engine.tools.connectors import ConnectorError

    def show(url: str) -> None:
        print(f"Sign in to {connector.name} in your browser:\n  {url}\nWaiting (Ctrl+C stops)…", flush=True)

    try:
        done = asyncio.run(sign_in(connector, vault, show, version=__version__, within=timeout))
    except ConnectorError as e:
        print(f"orkas: {e}", file=sys.stderr)
        return EXIT_FAILED
    HealthFile(settings.data_dir / "connector-health.json").succeeded(connector.id, done.tools)
    print(f"signed in to {connector.name}: {done.tools} tools")
    return EXIT_OK


async def _checked(settings: Settings, check: bool) -> list[dict[str, Any]]:
    from orkas.app import connector_hub

    hub = connector_hub(settings)
    try:
        if check:
            await hub.servers(None)
        return await hub.status()
    finally:
        await hub.close()


async def _tools(settings: Settings, name: str) -> ServerTools:
    from orkas.app import connector_hub

    hub = connector_hub(settings)
    try:
        return await hub.probe(name)
    except ToolInputError as e:
        raise ConfigError(str(e)) from None
    finally:
        await hub.close()


def _tool_row(tool: RemoteTool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "read_only": tool.read_only,
        "closed_world": tool.closed_world,
        "input_schema": dict(tool.input_schema),
    }


def _import_one(connectors: Any, entry: dict[str, Any], yes: bool) -> None:
    from orkas.adapter.connectors.config import check_pairs

    try:
        if "error" in entry:
            raise ConfigError(entry["error"])
        if "url" in entry:
            added = connectors.add(entry["name"], url=entry["url"], headers=check_pairs(entry["headers"], "header"))
        else:
            _confirm(entry["command"], yes)
            added = connectors.add(
                entry["name"], command=entry["command"], env=check_pairs(entry["env"], "env"), cwd=entry.get("cwd")
            )
        print(f"added {added.id} ({added.kind})")
    except ConfigError as e:  # one bad entry is said and skipped; the others still come in
        print(f"orkas: {entry['name']}: {e}", file=sys.stderr)

"""`add_connector`: the commander proposes an MCP server the person asked for. The person sees what would be
added — the URL, or the exact command that would run on their computer, and the names (never the values) of
its headers or environment — and decides. Nothing is written or started before they accept; a proposal left
unanswered for 10 minutes is declined."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import Any

from orkas.adapter.connectors.config import Connectors
from orkas.core.errors import ConfigError
from orkas.engine.consent import Ask
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result

EXPIRES_AFTER = 600.0  # seconds


class AddConnector:
    name = "add_connector"
    description = (
        "Propose adding an MCP server (a connector) the user asked for: a remote one by `url` (https, or http on "
        "this computer) with optional `headers`, or a local one by `command` (its command line) with optional "
        "`env` and `cwd`. The user sees exactly what would be added and decides; then its tools are reachable "
        "through mcp_list_tools and mcp_call."
    )
    read_only = False
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 40},
            "url": {"type": "string", "maxLength": 2000},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}},
            "command": {"type": "string", "maxLength": 1500},  # shown whole to the person: kept readable
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
            "cwd": {"type": "string", "maxLength": 4000},
        },
        "required": ["name"],
        "additionalProperties": False,
    }

    def __init__(
        self, connectors: Connectors | Callable[[], Connectors], added: Callable[[], object] = lambda: None
    ) -> None:
        """`connectors`, or how to get them when a proposal is made (no hub is loaded for a run that makes none)."""
        self._connectors = connectors
        self.added = added

    @property
    def connectors(self) -> Connectors:
        return self._connectors() if callable(self._connectors) else self._connectors

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        name, url, command, cwd = input["name"], input.get("url"), input.get("command"), input.get("cwd")
        headers, env = dict(input.get("headers") or {}), dict(input.get("env") or {})
        try:  # a proposal that could never be added never reaches the person as a question
            connector, headers, env = self.connectors.prepare(
                name, url=url, command=command, headers=headers, env=env, cwd=cwd
            )
        except ConfigError as e:
            return error_result(f"not added: {e}")
        if connector.url:
            shown = f"Add the remote MCP server {connector.name!r}: {connector.url}"
        else:
            shown = (
                f"Add the local MCP server {connector.name!r}. It will RUN THIS COMMAND on this computer, with your "
                f"permissions, whenever an agent uses it:\n  {shlex.join(connector.command)}"
            )
            if connector.cwd:
                shown += f"\n  in {connector.cwd}"
        secrets = [*(f"header {k}" for k in headers), *(f"env {k}" for k in env)]
        if secrets:
            shown += "\nSecrets kept in the vault (values hidden): " + ", ".join(secrets)
        ask = Ask(
            tool=self.name,
            level="dangerous",
            categories=("connector",) if connector.url else ("connector", "runs_program"),
            preview=shown,  # whole, never cut: the person must see the exact command
            key=None,
            expires_after=EXPIRES_AFTER,
        )
        if not await ctx.ask(ask):
            return error_result("not added: the user declined (or nobody answered within 10 minutes)")
        try:
            added = self.connectors.add(name, url=url, command=command, headers=headers, env=env, cwd=cwd)
        except ConfigError as e:
            return error_result(f"not added: {e}")
        self.added()
        return text_result(
            f"added {added.name} ({added.kind}); use mcp_list_tools with server {added.name!r} to see its tools",
            {"connector": added.public()},
        )

"""What the reverse bridge does for each method: Orkas's own tools, run with the external agent's run — its Stop,
and the person's consent asked in that member's bubble — so a bridge call is no wider than the same call made
by an Orkas agent. A connector call is confirmed per (agent, connector): once, always (remembered in a
machine-local file), or no (never remembered); nobody there, or no answer within 10 minutes, is a no."""

from __future__ import annotations

import itertools
import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orkas.adapter.agents.bridge import BridgeGrants, Handler, Reply
from orkas.adapter.agents.external import RunTools
from orkas.adapter.connectors.hub import ConnectorHub
from orkas.core.errors import ToolInputError
from orkas.engine.consent import Ask
from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage
from orkas.engine.skills import Catalog
from orkas.engine.tools.base import Tool, ToolContext, ToolResult, ToolSet
from orkas.engine.tools.connectors import ConnectorError, McpCall, McpListTools, check_arguments

CONFIRM_AFTER = 600.0  # seconds: a connector question unanswered by then is a no
CHAT_CHARS = 30_000

_ids = itertools.count(1)


@dataclass(slots=True)
class BridgeParts:
    """What a run's bridge may reach; None or empty: that part is not there (and its methods say so)."""

    workspace: Path
    catalog: Catalog | None = None
    bash: Tool | None = None  # the workspace's shell tool, with the skills' folders readable
    knowledge: Sequence[Tool] = ()  # kb_search, kb_read, kb_list
    chat_search: Tool | None = None
    read_conversation: Callable[[str], tuple[str, list[Any]]] | None = None
    connectors: ConnectorHub | None = None
    grants: BridgeGrants | None = None
    extra: dict[str, Handler] = field(default_factory=dict)


def _text(result: ToolResult) -> Reply:
    parts = [
        b.text if isinstance(b, TextBlock) else "[an image, not passed through the bridge]" for b in result.content
    ]
    return Reply("\n".join(parts), result.is_error)


def handlers(tools: RunTools, parts: BridgeParts) -> dict[str, Handler]:
    async def allowed(ask: Ask) -> bool:
        return await tools.ask(ask) != "deny"

    def context() -> ToolContext:
        return ToolContext(
            workspace=parts.workspace, signal=tools.signal, tool_use_id=f"bridge-{next(_ids)}", ask=allowed
        )

    def via(tool: Tool, shape: Callable[[Mapping[str, Any]], Mapping[str, Any]] = dict) -> Handler:
        checked = ToolSet([tool])  # the tool's own schema, as for an Orkas agent's call

        async def handle(params: Mapping[str, Any]) -> Reply:
            given = shape(params)
            try:
                checked.validate(tool.name, given)
                return _text(await tool.execute(given, context()))
            except ToolInputError as e:
                return Reply(str(e), True)

        return handle

    found: dict[str, Handler] = {}
    catalog = parts.catalog
    if catalog is not None:
        from orkas.engine.skills import SkillRead, SkillSearch

        search, read = SkillSearch(catalog), SkillRead(catalog)

        async def list_skills(params: Mapping[str, Any]) -> Reply:
            if str(params.get("query", "")).strip():
                return _text(await search.execute({"query": params["query"]}, context()))
            lines = [f"- {s.name}: {s.text.description}" for s in (catalog.get(n) for n in catalog.names()) if s]
            return Reply("\n".join(lines) or "No skills.")

        found["orkas_list_skills"] = list_skills
        found["orkas_read_skill"] = via(read, lambda p: {k: v for k, v in p.items() if k in ("name", "file") and v})

        async def run_skill(params: Mapping[str, Any]) -> Reply:
            skill = catalog.get(str(params.get("name", "")))
            if skill is None:
                return Reply(f"no skill {params.get('name')!r}; orkas_list_skills lists them", True)
            script = (skill.folder / str(params.get("script", ""))).resolve()
            if skill.folder.resolve() not in script.parents or not script.is_file():
                return Reply(f"{params.get('script')!r} is not a file of the skill {skill.name}", True)
            if parts.bash is None:
                return Reply("running skills is not available here", True)
            try:  # each argument quoted: the agent's text is data for the script, never more shell
                words = shlex.split(str(params.get("args", "")))
            except ValueError as e:
                return Reply(f"args: {e}", True)
            command = shlex.join(["bash", str(script), *words])
            return await via(parts.bash)({"command": command, "cwd": str(skill.folder)})

        found["orkas_run_skill"] = run_skill
    for tool in parts.knowledge:
        found[tool.name] = via(tool)
    if parts.chat_search is not None:
        found["chat_search"] = via(parts.chat_search)
    if parts.read_conversation is not None:
        reader = parts.read_conversation

        async def chat_read(params: Mapping[str, Any]) -> Reply:
            import asyncio

            ident = str(params.get("conversation_id", ""))
            title, messages = await asyncio.to_thread(reader, ident)
            if not messages:
                return Reply(f"no conversation {ident!r}: chat_search gives the ids", True)
            limit = max(1, min(int(params.get("max_messages") or 50), 200))
            lines = [f"# {title}"]
            for message in messages[-limit:]:
                who = "person" if isinstance(message, UserMessage) else "assistant"
                if isinstance(message, UserMessage | AssistantMessage):
                    said = " ".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()
                    if said:
                        lines.append(f"{who}: {said}")
            text = "\n\n".join(lines)[-CHAT_CHARS:]
            from orkas.engine.tools.untrusted import wrap

            return Reply(wrap(text, f"conversation:{ident}"))

        found["chat_read"] = chat_read
    hub = parts.connectors
    if hub is not None:
        found["orkas_list_connector_tools"] = via(McpListTools(hub))
        grants, renderer = parts.grants, McpCall(hub)

        async def call_connector(params: Mapping[str, Any]) -> Reply:
            server, name = str(params.get("server", "")), str(params.get("tool", ""))
            given = params.get("arguments")
            arguments: dict[str, Any] = given if isinstance(given, dict) else {}
            try:
                remote = await hub.tool(server, name)
                check_arguments(remote, arguments)
            except (ToolInputError, ConnectorError) as e:
                return Reply(str(e), True)
            if grants is None or not grants.allowed(tools.agent, remote.server_id):
                shown = json.dumps(arguments, ensure_ascii=False, indent=1)
                decision = await tools.ask(
                    Ask(
                        tool="orkas_call_connector_tool",
                        level="dangerous",
                        categories=("connector",),
                        preview=f"The external agent {tools.agent} wants to use the connector {remote.server}: "
                        f"{remote.name}\n{shown}"[:2000],
                        key=None,
                        expires_after=CONFIRM_AFTER,
                        choices=("allow_once", "always", "deny"),
                    )
                )
                if decision == "deny":
                    return Reply(
                        f"the person did not allow {tools.agent} to use {remote.server}; nothing was called", True
                    )
                if decision == "always" and grants is not None:
                    grants.remember(tools.agent, remote.server_id)
            try:
                outcome = await hub.call(remote, arguments, tools.signal)
            except ConnectorError as e:
                return Reply(f"{remote.server}.{remote.name} failed: {e}", True)
            return _text(renderer.result(remote, outcome, context()))

        found["orkas_call_connector_tool"] = call_connector

    async def handoff(params: Mapping[str, Any]) -> Reply:
        reason = str(params.get("reason") or "completed_handoff")
        if reason not in ("completed_handoff", "capability_boundary"):
            return Reply("reason is completed_handoff or capability_boundary", True)
        tools.handoff(reason, str(params.get("summary", "")))
        return Reply("handed back: the commander takes the conversation when your answer ends")

    found["orkas_handoff_to_commander"] = handoff
    found.update(parts.extra)
    return found

"""`orkas bridge`: the stdio MCP server an external agent CLI spawns from the per-run configuration Orkas wrote
for it. Each tool forwards to the running app over its unix socket (adapter/agents/bridge.py) with the run's token,
read from the 0600 file the configuration names; the app decides — allow-list, the person's consent — and
answers. Only the capabilities of this run are listed. stdout is the MCP channel: nothing else is printed there.

    ORKAS_BRIDGE_SOCKET       the app's socket for this run
    ORKAS_BRIDGE_TOKEN_FILE   the file holding this run's token
    ORKAS_BRIDGE_CAPABILITIES skills,kb,chats,connectors,handoff (those given to this run)
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from orkas.adapter.agents.bridge import MAX_LINE
from orkas.core.errors import ConfigError

READ = ToolAnnotations(read_only_hint=True)


class BridgeClient:
    """One connection to the app, opened at the first call; answers matched to requests by id."""

    def __init__(self, socket_path: str, token: str) -> None:
        self.socket_path = socket_path
        self.token = token
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def _connect(self) -> asyncio.StreamWriter:
        async with self._lock:
            if self._writer is None or self._writer.is_closing():
                reader, self._writer = await asyncio.open_unix_connection(self.socket_path, limit=MAX_LINE)
                self._reader_task = asyncio.create_task(self._read(reader))
            return self._writer

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while line := await reader.readline():
                answer = json.loads(line)
                ident = answer.get("id") if isinstance(answer, dict) else None
                future = self._pending.pop(ident, None) if isinstance(ident, int) else None
                if future is not None and not future.done():
                    future.set_result(answer)
        except (ConnectionError, ValueError):
            pass
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_result({"text": "the Orkas run this bridge served is over", "is_error": True})
            self._pending.clear()

    async def call(self, method: str, params: Mapping[str, Any]) -> str:
        try:
            writer = await self._connect()
        except OSError:
            raise ToolError("Orkas is not reachable: the run this bridge served is over") from None
        ident = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        request = {"id": ident, "token": self.token, "method": method, "params": dict(params)}
        writer.write(json.dumps(request, ensure_ascii=False).encode() + b"\n")
        await writer.drain()
        answer = await future
        if answer.get("is_error"):
            raise ToolError(str(answer.get("text", "failed")))
        return str(answer.get("text", ""))


def build(client: BridgeClient, capabilities: set[str]) -> MCPServer:
    app = MCPServer("orkas", instructions="Orkas: the person's skills, knowledge, past chats and connectors.")

    if "skills" in capabilities:

        @app.tool(annotations=READ)
        async def orkas_list_skills(query: str = "") -> str:
            """List the Orkas skills you may use (name and when to use it); `query` narrows by meaning."""
            return await client.call("orkas_list_skills", {"query": query})

        @app.tool(annotations=READ)
        async def orkas_read_skill(name: str, file: str = "") -> str:
            """Read an Orkas skill's instructions (or one `file` beside them)."""
            return await client.call("orkas_read_skill", {"name": name, **({"file": file} if file else {})})

        @app.tool()
        async def orkas_run_skill(name: str, script: str, args: str = "") -> str:
            """Run a script of an Orkas skill (a file in its folder) through Orkas's sandbox; the person is asked
            first like for any command."""
            return await client.call("orkas_run_skill", {"name": name, "script": script, "args": args})

    if "kb" in capabilities:

        @app.tool(annotations=READ)
        async def kb_search(query: str, k: int = 8) -> str:
            """Search the person's knowledge base (their documents) by words and meaning; `k` passages."""
            return await client.call("kb_search", {"query": query, "k": k})

        @app.tool(annotations=READ)
        async def kb_read(doc_id: str, start_line: int = 1, end_line: int | None = None) -> str:
            """Read a document of the knowledge base (`doc_id` from kb_search or kb_list), a range of lines."""
            params: dict[str, Any] = {"doc_id": doc_id, "start_line": start_line}
            if end_line is not None:
                params["end_line"] = end_line
            return await client.call("kb_read", params)

        @app.tool(annotations=READ)
        async def kb_list() -> str:
            """List the knowledge base's documents."""
            return await client.call("kb_list", {})

    if "chats" in capabilities:

        @app.tool(annotations=READ)
        async def chat_search(query: str, k: int = 8) -> str:
            """Search the person's past conversations with Orkas."""
            return await client.call("chat_search", {"query": query, "k": k})

        @app.tool(annotations=READ)
        async def chat_read(conversation_id: str, max_messages: int = 50) -> str:
            """Read a past conversation (its latest messages) by the id chat_search gave."""
            return await client.call("chat_read", {"conversation_id": conversation_id, "max_messages": max_messages})

    if "connectors" in capabilities:

        @app.tool(annotations=READ)
        async def orkas_list_connector_tools(server: str = "") -> str:
            """List the tools of the MCP servers the person connected to Orkas."""
            return await client.call("orkas_list_connector_tools", {"server": server} if server else {})

        @app.tool()
        async def orkas_call_connector_tool(server: str, tool: str, arguments: dict[str, Any] | None = None) -> str:
            """Call a tool of a connector; the person confirms each connector for you (once, always, or no)."""
            params = {"server": server, "tool": tool, "arguments": arguments or {}}
            return await client.call("orkas_call_connector_tool", params)

    if "handoff" in capabilities:

        @app.tool()
        async def orkas_handoff_to_commander(reason: str = "completed_handoff", summary: str = "") -> str:
            """Give the conversation back to Orkas's commander when you are done (reason `completed_handoff`) or
            the task is beyond what you can do (`capability_boundary`)."""
            return await client.call("orkas_handoff_to_commander", {"reason": reason, "summary": summary})

    return app


def run(env: Mapping[str, str]) -> int:
    socket_path, token_file = env.get("ORKAS_BRIDGE_SOCKET"), env.get("ORKAS_BRIDGE_TOKEN_FILE")
    if not socket_path or not token_file:
        raise ConfigError("orkas bridge is started by Orkas for an external agent (ORKAS_BRIDGE_SOCKET is not set)")
    try:
        token = Path(token_file).read_text().strip()
    except OSError as e:
        raise ConfigError(f"the bridge's token cannot be read ({e.strerror}): the run is over") from None
    capabilities = {c.strip() for c in env.get("ORKAS_BRIDGE_CAPABILITIES", "").split(",") if c.strip()}
    build(BridgeClient(socket_path, token), capabilities).run()
    return 0

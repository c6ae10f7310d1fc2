"""`orkas bridge`: the stdio MCP server an external agent CLI spawns from the per-run configuration Orkas wrote
for it. Each tool forwards to the running app over its unix socket (adapter/agents/bridge.py) with the run's token,
read from the 0600 file the configuration names; the app decides — allow-list, the person's consent — and
answers. Only the capabilities of this run are listed. stdout is the MCP channel: nothing else is printed there.

It speaks MCP's stdio transport itself, with the standard library only: an agent CLI asks for its tools the moment
it starts, and the SDK's server took half a second to import — on a busy machine Claude Code's first request went
out without Orkas's tools. `initialize` is answered in about 0.1 s (bench/bridge_start.py).

    ORKAS_BRIDGE_SOCKET       the app's socket for this run
    ORKAS_BRIDGE_TOKEN_FILE   the file holding this run's token
    ORKAS_BRIDGE_CAPABILITIES skills,kb,chats,connectors,handoff (those given to this run)
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orkas.adapter.agents.bridge import MAX_LINE
from orkas.core.errors import ConfigError


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


@dataclass(frozen=True, slots=True)
class Tool:
    """One bridge tool, as `tools/list` shows it: `params` are (name, JSON type, default or REQUIRED)."""

    capability: str
    name: str
    description: str
    params: tuple[tuple[str, str, Any], ...] = ()
    read_only: bool = False

    def listed(self) -> dict[str, Any]:
        properties = {name: {"type": kind} for name, kind, _ in self.params}
        for name, _, default in self.params:
            if default is not REQUIRED and default is not None:
                properties[name]["default"] = default
        schema = {
            "type": "object",
            "properties": properties,
            "required": [n for n, _, d in self.params if d is REQUIRED],
        }
        listed: dict[str, Any] = {"name": self.name, "description": self.description, "inputSchema": schema}
        if self.read_only:
            listed["annotations"] = {"readOnlyHint": True}
        return listed

    def arguments(self, given: Any) -> dict[str, Any]:
        """The call's arguments checked against the schema, defaults filled in; empty optional ones left out (the
        app reads a missing `file`, `server` or `end_line` as "none")."""
        if not isinstance(given, dict):
            raise ToolError("arguments must be an object")
        unknown = sorted(set(given) - {name for name, _, _ in self.params})
        if unknown:
            raise ToolError(f"unknown argument {unknown[0]!r} for {self.name}")
        found: dict[str, Any] = {}
        for name, kind, default in self.params:
            if name not in given or given[name] is None:
                if default is REQUIRED:
                    raise ToolError(f"{self.name} needs {name!r}")
                if default not in ("", None):
                    found[name] = default
                continue
            value = given[name]
            if not isinstance(value, TYPES[kind]) or (kind == "integer" and isinstance(value, bool)):
                raise ToolError(f"{self.name}: {name!r} must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}")
            if value != "":
                found[name] = value
        return found


def _valid_id(ident: Any) -> bool:
    """JSON-RPC ids here: a string or an integer (never a bool, a list, an object, NaN)."""
    return isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


class ToolError(Exception):
    """A call the bridge refuses or the app answered with an error: an `isError` result, as the model reads it."""


REQUIRED = object()
TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "object": dict}
TOOLS = (
    Tool("skills", "orkas_list_skills",
         "List the Orkas skills you may use (name and when to use it); `query` narrows by meaning.",
         (("query", "string", ""),), read_only=True),
    Tool("skills", "orkas_read_skill", "Read an Orkas skill's instructions (or one `file` beside them).",
         (("name", "string", REQUIRED), ("file", "string", "")), read_only=True),
    Tool("skills", "orkas_run_skill",
         "Run a script of an Orkas skill (a file in its folder) through Orkas's sandbox; the person is asked first "
         "like for any command.",
         (("name", "string", REQUIRED), ("script", "string", REQUIRED), ("args", "string", ""))),
    Tool("kb", "kb_search", "Search the person's knowledge base (their documents) by words and meaning; `k` passages.",
         (("query", "string", REQUIRED), ("k", "integer", 8)), read_only=True),
    Tool("kb", "kb_read",
         "Read a document of the knowledge base (`doc_id` from kb_search or kb_list), a range of lines.",
         (("doc_id", "string", REQUIRED), ("start_line", "integer", 1), ("end_line", "integer", None)),
         read_only=True),
    Tool("kb", "kb_list", "List the knowledge base's documents.", read_only=True),
    Tool("chats", "chat_search", "Search the person's past conversations with Orkas.",
         (("query", "string", REQUIRED), ("k", "integer", 8)), read_only=True),
    Tool("chats", "chat_read", "Read a past conversation (its latest messages) by the id chat_search gave.",
         (("conversation_id", "string", REQUIRED), ("max_messages", "integer", 50)), read_only=True),
    Tool("connectors", "orkas_list_connector_tools", "List the tools of the MCP servers the person connected to Orkas.",
         (("server", "string", ""),), read_only=True),
    Tool("connectors", "orkas_call_connector_tool",
         "Call a tool of a connector; the person confirms each connector for you (once, always, or no).",
         (("server", "string", REQUIRED), ("tool", "string", REQUIRED), ("arguments", "object", None))),
    Tool("handoff", "orkas_handoff_to_commander",
         "Give the conversation back to Orkas's commander when you are done (reason `completed_handoff`) or the task "
         "is beyond what you can do (`capability_boundary`).",
         (("reason", "string", "completed_handoff"), ("summary", "string", ""))),
)  # fmt: skip
PROTOCOLS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
INSTRUCTIONS = "Orkas: the person's skills, knowledge, past chats and connectors."


class BridgeServer:
    """MCP's stdio transport, spoken with the standard library: one JSON-RPC message per line in and out.
    Calls run concurrently (an agent may ask several at once); `notifications/cancelled` stops one."""

    def __init__(self, client: BridgeClient, capabilities: set[str], version: str) -> None:
        self.client = client
        self.tools = {tool.name: tool for tool in TOOLS if tool.capability in capabilities}
        self.version = version
        self.calls: dict[Any, asyncio.Task[None]] = {}

    def send(self, message: dict[str, Any]) -> None:
        # ASCII with escapes: a lone surrogate in a text cannot break the line; never NaN or Infinity (not JSON).
        line = json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=True, allow_nan=False)
        sys.stdout.buffer.write(line.encode() + b"\n")
        sys.stdout.buffer.flush()

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        stdin = sys.stdin.buffer
        while line := await loop.run_in_executor(None, stdin.readline, MAX_LINE):
            if not line.strip():
                continue
            if len(line) >= MAX_LINE and not line.endswith(b"\n"):  # too long: its rest is skipped, not parsed
                while (rest := await loop.run_in_executor(None, stdin.readline, MAX_LINE)) and not rest.endswith(b"\n"):
                    pass
                self.send({"id": None, "error": {"code": -32600, "message": f"a message over {MAX_LINE:,} bytes"}})
                continue
            try:
                message = json.loads(line, parse_constant=_not_json)
            except (ValueError, RecursionError):  # a nesting deep enough to exhaust the parser is not JSON-RPC
                self.send({"id": None, "error": {"code": -32700, "message": "not JSON"}})
                continue
            if message == []:
                self.send({"id": None, "error": {"code": -32600, "message": "an empty batch"}})
            for one in message if isinstance(message, list) else [message]:
                try:
                    self.receive(one)
                except Exception as e:  # one message's failure is its own: the bridge goes on for the next
                    ident = one.get("id") if isinstance(one, dict) and _valid_id(one.get("id")) else None
                    self.send(
                        {"id": ident, "error": {"code": -32603, "message": f"internal error ({type(e).__name__})"}}
                    )
        for task in list(self.calls.values()):  # the agent closed our stdin: it is gone
            task.cancel()

    def receive(self, message: Any) -> None:
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return  # a response to nothing we asked, or noise: JSON-RPC answers no notification
        method, ident, params = message["method"], message.get("id"), message.get("params") or {}
        if method == "notifications/cancelled" and isinstance(params, dict):
            wanted = params.get("requestId")
            task = self.calls.get(wanted) if _valid_id(wanted) else None
            if task is not None:
                task.cancel()
            return
        if ident is None:
            return  # notifications/initialized and the like
        if not _valid_id(ident):
            self.send({"id": None, "error": {"code": -32600, "message": "an id is a string or an integer"}})
            return
        if method == "initialize":
            asked = params.get("protocolVersion") if isinstance(params, dict) else None
            self.send({"id": ident, "result": {
                "protocolVersion": asked if asked in PROTOCOLS else PROTOCOLS[0],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "orkas", "version": self.version},
                "instructions": INSTRUCTIONS,
            }})  # fmt: skip
        elif method == "ping":
            self.send({"id": ident, "result": {}})
        elif method == "tools/list":
            self.send({"id": ident, "result": {"tools": [tool.listed() for tool in self.tools.values()]}})
        elif method == "tools/call" and isinstance(params, dict):
            self.calls[ident] = asyncio.create_task(self.call(ident, params))
        else:
            self.send({"id": ident, "error": {"code": -32601, "message": f"method not found: {method}"}})

    async def call(self, ident: Any, params: dict[str, Any]) -> None:
        try:
            tool = self.tools.get(str(params.get("name")))
            if tool is None:
                raise ToolError(f"unknown tool {params.get('name')!r}")
            text, failed = await self.client.call(tool.name, tool.arguments(params.get("arguments") or {})), False
        except ToolError as e:
            text, failed = str(e), True
        except asyncio.CancelledError:
            return  # cancelled by the agent: no answer is owed
        finally:
            self.calls.pop(ident, None)
        self.send({"id": ident, "result": {"content": [{"type": "text", "text": text}], "isError": failed}})


def run(env: Mapping[str, str]) -> int:
    socket_path, token_file = env.get("ORKAS_BRIDGE_SOCKET"), env.get("ORKAS_BRIDGE_TOKEN_FILE")
    if not socket_path or not token_file:
        raise ConfigError("orkas bridge is started by Orkas for an external agent (ORKAS_BRIDGE_SOCKET is not set)")
    try:
        token = Path(token_file).read_text().strip()
    except OSError as e:
        raise ConfigError(f"the bridge's token cannot be read ({e.strerror}): the run is over") from None
    capabilities = {c.strip() for c in env.get("ORKAS_BRIDGE_CAPABILITIES", "").split(",") if c.strip()}
    from orkas import __version__

    asyncio.run(BridgeServer(BridgeClient(socket_path, token), capabilities, __version__).serve())
    return 0

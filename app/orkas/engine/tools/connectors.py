"""The person's MCP servers, through two umbrella tools: `mcp_list_tools {server?}` and
`mcp_call {server, tool, arguments}`.

Two tools instead of one per remote tool keep the tool list small and byte-stable, whatever servers come
and go (the prompt cache survives a server being added). A server's annotations are its own words: a tool
stays on this machine only if it says so (`openWorldHint: false`). Any other tool may send its arguments
anywhere — a "read-only" search can put a secret in a URL — so it counts as leaving the machine and asks in
every mode, `auto` included, exactly like web_fetch's first visit to a host (once, for this run, always for
that server and tool, or deny). A closed-world tool its server marks read-only runs like a read; a
closed-world one that changes things asks like a workspace change. Results pass the same caps as the
built-in tools and their text is marked as coming from the connector: a server is outside text, never
instructions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from orkas.core.errors import ToolInputError
from orkas.engine.abort import AbortSignal
from orkas.engine.consent import Ask, preview
from orkas.engine.messages import ImageBlock, TextBlock, ToolResultContent
from orkas.engine.tools.base import ToolContext, ToolResult, error_result
from orkas.engine.tools.untrusted import note, wrap

OUTPUT_LIMIT = 30_000  # characters of a result the model sees (head and tail), as for a command's output
MAX_IMAGES = 8
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # base64 characters are ~4/3 of this
DESCRIPTION_CHARS = 400  # per remote tool in a listing of every server


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteTool:
    server: str  # the connector's name, as the model writes it
    server_id: str  # custom-<slug>: stable, for rules
    name: str
    description: str
    input_schema: Mapping[str, Any]
    read_only: bool  # readOnlyHint: true
    closed_world: bool = False  # openWorldHint: false — the server says the tool reaches nothing outside

    @property
    def runs_unasked(self) -> bool:
        """Only a tool that both stays on the machine and changes nothing runs without a question."""
        return self.read_only and self.closed_world


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerTools:
    server: str
    status: str  # connected | connecting | degraded | error | disconnected
    tools: tuple[RemoteTool, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CallOutcome:
    content: tuple[ToolResultContent, ...]
    is_error: bool = False


class ConnectorError(Exception):
    """A server could not be reached or failed mid-call: the model reads it as an error result."""


class SignInNeeded(ConnectorError):
    """The server wants the person to sign in (the first time, or the sign-in expired or was revoked): the model
    reads that the person must, and no retry helps until they do."""


class ConnectorAccess(Protocol):
    async def servers(self, server: str | None) -> list[ServerTools]:
        """Every enabled server with its tools (or the one named). Raises `ToolInputError` for an unknown name."""
        ...

    async def tool(self, server: str, name: str) -> RemoteTool:
        """Raises `ToolInputError` (unknown server or tool) or `ConnectorError` (unreachable)."""
        ...

    async def call(
        self, tool: RemoteTool, arguments: Mapping[str, Any], signal: AbortSignal
    ) -> CallOutcome:  # raises ConnectorError
        ...


def cap(text: str, limit: int = OUTPUT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    head, tail = text[: limit // 2], text[-(limit // 2) :]
    return f"{head}\n[… {len(text) - len(head) - len(tail)} characters omitted …]\n{tail}"


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class McpListTools:
    name = "mcp_list_tools"
    description = (
        "List the tools of the MCP servers (connectors) the person added. Without `server`: every server with "
        "its tools, one line each. With `server`: that server's tools with their input schemas — read them "
        "before mcp_call."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"server": {"type": "string", "description": "a server's name; omit for all"}},
        "additionalProperties": False,
    }
    read_only = True

    def __init__(self, access: ConnectorAccess) -> None:
        self.access = access

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        server = input.get("server")
        found = await self.access.servers(server)
        if not found:
            return ToolResult(content=(TextBlock(text="No MCP servers are set up (Settings → Connectors)."),))
        lines: list[str] = []
        for entry in found:
            state = entry.status + (f": {entry.error}" if entry.error else "")
            lines.append(f"## {entry.server} ({state}) — {len(entry.tools)} tools")
            for tool in entry.tools:
                mark = " [read-only]" if tool.runs_unasked else ""
                if server is None:
                    lines.append(f"- {tool.name}{mark}: {_one_line(tool.description, DESCRIPTION_CHARS)}")
                else:
                    schema = json.dumps(tool.input_schema, ensure_ascii=False, separators=(",", ":"))
                    lines.append(f"- {tool.name}{mark}: {tool.description.strip()}\n  input schema: {schema}")
        source = f"connector:{server}" if server else "connectors"
        note(ctx, source)  # descriptions are the servers' words
        text = wrap(cap("\n".join(lines)), source)
        return ToolResult(
            content=(TextBlock(text=text),),
            details={"servers": [{"server": e.server, "status": e.status, "tools": len(e.tools)} for e in found]},
        )


class McpCall:
    name = "mcp_call"
    description = (
        "Call a tool of an MCP server the person added: `server` (its name), `tool`, and `arguments` matching "
        "the tool's input schema (mcp_list_tools shows it). Unless a tool is marked read-only (it changes nothing and "
        "reaches nothing outside this computer), the person is asked first."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "server": {"type": "string"},
            "tool": {"type": "string"},
            "arguments": {"type": "object"},
        },
        "required": ["server", "tool"],
        "additionalProperties": False,
    }
    read_only = False

    def __init__(self, access: ConnectorAccess) -> None:
        self.access = access

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        arguments = dict(input.get("arguments") or {})
        try:  # opening the server's session: unreachable, or waiting for the person to sign in — said plainly
            tool = await self.access.tool(str(input["server"]), str(input["tool"]))
        except ConnectorError as e:
            return error_result(str(e), {"server": str(input["server"])})
        check_arguments(tool, arguments)  # ToolInputError: the model fixes its call, nothing ran
        if not tool.runs_unasked and not await ctx.ask(question(tool, arguments)):
            return error_result(f"the person did not allow {tool.server}.{tool.name}; nothing was called")
        try:
            outcome = await self.access.call(tool, arguments, ctx.signal)
        except ConnectorError as e:
            return error_result(f"{tool.server}.{tool.name} failed: {e}", {"server": tool.server, "tool": tool.name})
        return self.result(tool, outcome, ctx)

    def result(self, tool: RemoteTool, outcome: CallOutcome, ctx: ToolContext) -> ToolResult:
        """A remote result as a tool result: capped, images limited, its text marked as the connector's."""
        source = f"connector:{tool.server}"
        texts = [b.text for b in outcome.content if isinstance(b, TextBlock)]
        images = [b for b in outcome.content if isinstance(b, ImageBlock)]
        kept = [i for i in images if len(i.data) <= MAX_IMAGE_BYTES * 4 // 3 + 4][:MAX_IMAGES]
        dropped = len(images) - len(kept)
        body = "\n".join(texts) or ("(no text)" if not kept else "")
        if dropped:
            body += f"\n[{dropped} image(s) left out: more than {MAX_IMAGES} or over {MAX_IMAGE_BYTES:,} bytes]"
        note(ctx, source)
        content: list[ToolResultContent] = [TextBlock(text=wrap(cap(body), source))] if body else []
        content += kept
        return ToolResult(
            content=tuple(content),
            details={"server": tool.server, "tool": tool.name, "untrusted": source, "images": len(kept)},
            is_error=outcome.is_error,
        )


def question(tool: RemoteTool, arguments: Mapping[str, Any]) -> Ask:
    """What calling `tool` asks: leaving the machine (any tool not closed-world, in every mode), or a change."""
    shown = json.dumps(arguments, ensure_ascii=False, indent=1)
    leaves = not tool.closed_world
    return Ask(
        tool="mcp_call",
        level="dangerous" if leaves else "workspace_write",
        categories=("connector", "network") if leaves else ("connector",),
        preview=preview(f"{tool.server} → {tool.name}\n{shown}"),
        key=f"mcp_call:{tool.server_id}:{tool.name}",
    )


def connector_tools(access: ConnectorAccess) -> Sequence[Any]:
    return [McpListTools(access), McpCall(access)]


_validators: dict[str, Any] = {}  # by the schema's text: a server lists the same schemas every session


def _validator(tool: RemoteTool) -> Any:
    import jsonschema

    schema = dict(tool.input_schema or {"type": "object"})
    key = json.dumps(schema, sort_keys=True)
    if key not in _validators:
        try:
            validator_type = jsonschema.validators.validator_for(schema)
            validator_type.check_schema(schema)
            _validators[key] = validator_type(schema)
        except jsonschema.SchemaError:
            _validators[key] = None
        if len(_validators) > 2000:
            _validators.pop(next(iter(_validators)))
    return _validators[key]


def check_arguments(tool: RemoteTool, arguments: Mapping[str, Any]) -> None:
    """Raise `ToolInputError` naming what does not match the tool's input schema; a schema the server got wrong
    is the server's problem, and the call goes ahead (the server judges its own input)."""
    validator = _validator(tool)
    if validator is None:
        return
    errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"- {'/'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}" for e in errors[:8]]
        raise ToolInputError(
            f"arguments for {tool.server}.{tool.name} do not match its input schema:\n" + "\n".join(lines)
        )


def unknown(what: str, name: str, known: Sequence[str]) -> ToolInputError:
    listed = ", ".join(sorted(known)) or "none"
    return ToolInputError(f"no {what} {name!r}; the {what}s are: {listed}")

"""One of the person's MCP servers, linked: its session held open by a task of its own (the SDK's contexts must be
left by the task that entered them), its tools listed, a call made with a deadline and the abort signal, and every
failure recorded in its health (hub.py keeps the links and their health)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from orkas.adapter.connectors.config import Connector
from orkas.adapter.connectors.health import Health
from orkas.adapter.connectors.offers import (
    OfferedPrompt,
    OfferedResource,
    list_prompts,
    list_resources,
    prompt_text,
    resource_bytes,
)
from orkas.engine.abort import AbortSignal
from orkas.engine.messages import ImageBlock, TextBlock, ToolResultContent
from orkas.engine.tools.connectors import CallOutcome, ConnectorError, RemoteTool, SignInNeeded

if TYPE_CHECKING:
    import mcp

log = logging.getLogger(__name__)


class Hub(Protocol):
    """What a link needs of the hub that keeps it."""

    version: str
    clock: Callable[[], float]

    async def health_of(self, ident: str) -> Health: ...

    async def record(
        self, ident: str, what: str, *, tools: int | None = None, error: str = "", reached: bool = False
    ) -> None: ...

    def stderr_tail(self, connector: Connector) -> str: ...

    async def transport(self, connector: Connector, stack: AsyncExitStack, died: Callable[[], None]) -> Any: ...


CONNECT_TIMEOUT = 30.0
CALL_TIMEOUT = 300.0
MAX_TOOLS = 500  # per server: a listing beyond this is cut (and said)
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _sign_in_needed(error: BaseException | None) -> SignInNeeded | None:
    """The sign-in the server wants, wherever in a group or a chain of causes the transport wrapped it."""
    seen = 0
    while error is not None and seen < 20:
        seen += 1
        if isinstance(error, SignInNeeded):
            return error
        if isinstance(error, BaseExceptionGroup):
            for inner in error.exceptions:
                if (found := _sign_in_needed(inner)) is not None:
                    return found
            return None
        error = error.__cause__ or error.__context__
    return None


def _describe(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    if isinstance(error, BaseExceptionGroup) and error.exceptions:
        return _describe(error.exceptions[0])
    return text.splitlines()[0][:300]


@dataclass(slots=True)
class _Session:
    client: mcp.Client
    tools: dict[str, RemoteTool]
    ended: asyncio.Event
    prompts: tuple[OfferedPrompt, ...] | None = None  # listed on first use, forgotten when the server says so
    resources: tuple[OfferedResource, ...] | None = None


class Link:
    """One connector's session: opened on demand, held by its own task, closed on failure or shutdown."""

    def __init__(self, connector: Connector, hub: Hub) -> None:
        self.connector = connector
        self.hub = hub
        self.session: _Session | None = None
        self.status = "disconnected"
        self._opening = asyncio.Lock()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._counted = False  # this session's failure is recorded: one failure per session, not per symptom

    @property
    def alive(self) -> bool:
        return self.session is not None and not self.session.ended.is_set()

    async def open(self) -> _Session:
        async with self._opening:
            if self.alive:
                assert self.session is not None
                return self.session
            await self.close()
            health = await self.hub.health_of(self.connector.id)
            wait = health.waiting(self.hub.clock())
            if wait > 0:
                raise ConnectorError(
                    f"{self.connector.name} is unavailable ({health.last_error or health.status}); "
                    f"the next try is in {wait:.0f} s"
                )
            self.status = "connecting"
            self._counted = False  # a new attempt: its failure counts
            await self.hub.record(self.connector.id, "connecting")
            ready: asyncio.Future[_Session] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(self._hold(ready), name=f"connector {self.connector.id}")
            try:
                session = await asyncio.wait_for(asyncio.shield(ready), CONNECT_TIMEOUT)
            except TimeoutError:
                await self.close()
                await self._failed(f"no answer within {CONNECT_TIMEOUT:.0f} s", reached=False)
                raise ConnectorError(f"{self.connector.name} did not answer within {CONNECT_TIMEOUT:.0f} s") from None
            except Exception as e:
                await self.close()
                if (wanted := _sign_in_needed(e)) is not None:
                    await self._wants_sign_in(wanted)
                    raise wanted from None
                said = await asyncio.to_thread(self.hub.stderr_tail, self.connector) or _describe(e)
                await self._failed(said, reached=False)
                raise ConnectorError(f"{self.connector.name} could not be reached: {said}") from None
            self.status = "connected"
            await self.hub.record(self.connector.id, "connected", tools=len(session.tools))
            return session

    async def _hold(self, ready: asyncio.Future[_Session]) -> None:
        ended = asyncio.Event()
        try:
            import mcp

            async with AsyncExitStack() as stack:
                transport = await self.hub.transport(self.connector, stack, ended.set)
                client = await stack.enter_async_context(
                    mcp.Client(
                        transport,
                        read_timeout_seconds=CALL_TIMEOUT,
                        client_info=mcp.Implementation(name="orkas", version=self.hub.version),
                        message_handler=self._pushed,
                    )
                )
                tools = await _list_tools(client, self.connector)
                session = _Session(client, tools, ended)
                self.session = session
                ready.set_result(session)
                stop = asyncio.create_task(self._stop.wait())
                end = asyncio.create_task(ended.wait())
                watching = asyncio.create_task(self._listen(session))
                try:
                    await asyncio.wait({stop, end}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop.cancel()
                    end.cancel()
                    watching.cancel()
                    await asyncio.gather(watching, return_exceptions=True)
                if ended.is_set() and not self._stop.is_set():
                    await self._failed("the server's process exited", reached=True)
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e if isinstance(e, Exception) else ConnectorError("stopped"))
            if not isinstance(e, Exception):
                raise
        finally:
            ended.set()
            self.session = None

    # --- what changed on the server's side (listChanged) ---

    async def _listen(self, session: _Session) -> None:
        """A 2026-07-28 server says its lists changed on a `subscriptions/listen` stream; an older one pushes
        notifications (`_pushed`). Either way the list is fetched again when next wanted."""
        from mcp.client.subscriptions import ListenNotSupportedError

        try:
            async with session.client.listen(
                tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
            ) as changes:
                async for change in changes:
                    await self._changed(session, type(change).__name__)
        except ListenNotSupportedError:
            return  # an older server: it pushes its notices, if it sends any
        except Exception as e:  # a server that will not listen: its lists are read again when the session is
            log.info("connector %s: no change notices (%s)", self.connector.id, _describe(e))

    async def _pushed(self, message: Any) -> None:
        method = str(getattr(getattr(message, "root", message), "method", ""))
        if self.session is not None and method.endswith("/list_changed"):
            kind = {"tools": "ToolsListChanged", "prompts": "PromptsListChanged", "resources": "ResourcesListChanged"}
            await self._changed(self.session, kind.get(method.split("/")[1], ""))

    async def _changed(self, session: _Session, change: str) -> None:
        if change == "PromptsListChanged":
            session.prompts = None
        elif change == "ResourcesListChanged":
            session.resources = None
        elif change == "ToolsListChanged":
            try:
                session.tools = await _list_tools(session.client, self.connector)
            except Exception as e:  # the next session lists them again
                log.warning("connector %s: its new tools could not be listed (%s)", self.connector.id, _describe(e))
                return
            await self.hub.record(self.connector.id, "connected", tools=len(session.tools))

    # --- prompts and resources (offers.py) ---

    async def prompts(self) -> tuple[OfferedPrompt, ...]:
        session = await self.open()
        if session.prompts is None:
            session.prompts = await self._asked(list_prompts(session.client, self.connector))
        return session.prompts

    async def resources(self) -> tuple[OfferedResource, ...]:
        session = await self.open()
        if session.resources is None:
            session.resources = await self._asked(list_resources(session.client, self.connector))
        return session.resources

    async def prompt(self, name: str, arguments: Mapping[str, str]) -> str:
        session = await self.open()
        return prompt_text(await self._asked(session.client.get_prompt(name, dict(arguments))))

    async def read(self, uri: str) -> tuple[bytes, str | None]:
        session = await self.open()
        return resource_bytes(await self._asked(session.client.read_resource(uri)), uri)

    async def _asked(self, request: Any) -> Any:
        """A request of the person's (not the model's): its failure is said, not counted against the server
        unless the connection broke."""
        from mcp import MCPError

        try:
            return await asyncio.wait_for(request, CONNECT_TIMEOUT)
        except TimeoutError:
            raise ConnectorError(f"{self.connector.name} did not answer within {CONNECT_TIMEOUT:.0f} s") from None
        except MCPError as e:
            raise ConnectorError(f"{self.connector.name}: {_describe(e)}") from None

    async def call(self, tool: RemoteTool, arguments: Mapping[str, Any], signal: AbortSignal) -> CallOutcome:
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        session = await self.open()
        task = asyncio.ensure_future(session.client.call_tool(tool.name, dict(arguments)))
        ended = asyncio.ensure_future(session.ended.wait())

        def stop() -> None:
            task.cancel()

        unregister = signal.on_abort(stop)
        try:
            await asyncio.wait({task, ended}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():  # the process died under the call
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                await self._failed("the server's process exited during a call", reached=True)
                raise ConnectorError(f"{tool.server} stopped during the call (its process exited)")
            result = task.result()
        except asyncio.CancelledError:
            if signal.aborted:
                raise ConnectorError("stopped by the person") from None
            raise
        except MCPError as e:
            if e.code not in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
                raise ConnectorError(_describe(e)) from None  # the server answered: it is up
            died = session.ended.is_set()
            said = "its process exited during the call" if died else _describe(e)
            await self._failed(said, reached=True)
            await self.close()
            raise ConnectorError(f"{tool.server}: {said}") from None
        except ConnectorError:
            raise
        except Exception as e:  # the transport broke (an HTTP error, a reset): the server is not healthy
            if (wanted := _sign_in_needed(e)) is not None:  # the sign-in ran out mid-session and would not refresh
                await self.close()
                await self._wants_sign_in(wanted)
                raise wanted from None
            await self._failed(_describe(e), reached=True)
            await self.close()
            raise ConnectorError(_describe(e)) from None
        finally:
            unregister()
            ended.cancel()
        if self.status != "connected":
            self.status = "connected"
            await self.hub.record(self.connector.id, "connected", tools=len(session.tools))
        return _outcome(result)

    async def _wants_sign_in(self, wanted: SignInNeeded) -> None:
        self.status = "signin"
        self._counted = True
        log.warning("connector %s: %s", self.connector.id, wanted)
        await self.hub.record(self.connector.id, "signin", error=str(wanted))

    async def _failed(self, error: str, *, reached: bool) -> None:
        if self._counted:
            return
        self._counted = True
        self.status = "degraded" if reached else "error"
        log.warning("connector %s: %s", self.connector.id, error)
        await self.hub.record(self.connector.id, "failed", error=error, reached=reached)

    async def close(self) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is not None and not task.done():
            done, _ = await asyncio.wait({task}, timeout=5.0)
            if not done:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self.session = None


async def _list_tools(client: mcp.Client, connector: Connector) -> dict[str, RemoteTool]:
    found: dict[str, RemoteTool] = {}
    cursor: str | None = None
    for _ in range(50):
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            hints = tool.annotations
            found[tool.name] = RemoteTool(
                server=connector.name,
                server_id=connector.id,
                name=tool.name,
                description=tool.description or tool.title or "",
                input_schema=dict(tool.input_schema or {"type": "object"}),
                read_only=bool(hints is not None and hints.read_only_hint is True),
                closed_world=bool(hints is not None and hints.open_world_hint is False),
            )
        cursor = page.next_cursor
        if cursor is None or len(found) >= MAX_TOOLS:
            break
    return dict(list(found.items())[:MAX_TOOLS])


def _outcome(result: Any) -> CallOutcome:
    import base64
    import binascii
    import json

    content: list[ToolResultContent] = []
    for block in result.content or ():
        kind = getattr(block, "type", "")
        if kind == "text":
            content.append(TextBlock(text=block.text))
        elif kind == "image" and block.mime_type in IMAGE_TYPES:
            try:
                base64.b64decode(block.data, validate=True)
            except (binascii.Error, ValueError):
                content.append(TextBlock(text="[an image that is not valid base64 was left out]"))
                continue
            content.append(ImageBlock(data=block.data, media_type=block.mime_type))
        elif kind == "resource" and getattr(block.resource, "text", None) is not None:
            content.append(TextBlock(text=f"[resource {block.resource.uri}]\n{block.resource.text}"))
        elif kind == "resource_link":
            content.append(TextBlock(text=f"[resource link {block.uri}: {block.name}]"))
        else:
            content.append(TextBlock(text=f"[{kind or 'unknown'} content left out]"))
    if not any(isinstance(c, TextBlock) for c in content) and result.structured_content is not None:
        content.insert(0, TextBlock(text=json.dumps(result.structured_content, ensure_ascii=False, indent=1)))
    return CallOutcome(content=tuple(content), is_error=bool(result.is_error))

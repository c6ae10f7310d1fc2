"""An MCP transport over a local server's stdin and stdout (one JSON-RPC message per line), for a process the
one executor started (`Executor.open_pipes`) — the SDK's own stdio client would start it itself."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orkas.engine.sandbox.executor import Piped

MAX_MESSAGE = 32 * 1024 * 1024  # bytes of one JSON-RPC line from a local server


@asynccontextmanager
async def piped_transport(piped: Piped, died: Callable[[], None]) -> AsyncIterator[Any]:
    """An MCP transport over a process's stdin/stdout: one JSON-RPC message per line. `died` is called when the
    process's output ends (it exited, or closed stdout)."""
    import anyio
    from mcp import types
    from mcp.shared.message import SessionMessage

    stdout, stdin = piped.process.stdout, piped.process.stdin
    assert stdout is not None and stdin is not None
    inbound_writer, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outbound, outbound_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        buffer = bytearray()
        async with inbound_writer:
            try:
                while chunk := await stdout.read(65536):
                    buffer += chunk
                    while (end := buffer.find(b"\n")) >= 0:
                        line = bytes(buffer[:end])
                        del buffer[: end + 1]
                        if not line.strip():
                            continue
                        try:
                            message: SessionMessage | Exception = SessionMessage(
                                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                            )
                        except ValueError as e:
                            message = e
                        await inbound_writer.send(message)
                    if len(buffer) > MAX_MESSAGE:
                        await inbound_writer.send(ValueError(f"a message longer than {MAX_MESSAGE:,} bytes"))
                        return
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
                pass
            finally:
                died()

    async def write() -> None:
        async with outbound_reader:
            try:
                async for message in outbound_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    stdin.write(data.encode() + b"\n")
                    await stdin.drain()
            except (ConnectionError, OSError):
                await inbound_writer.aclose()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        try:
            yield inbound, outbound
        finally:
            with anyio.CancelScope(shield=True):
                await piped.stop()
            tasks.cancel_scope.cancel()


@asynccontextmanager
async def opened(streams: Any) -> AsyncIterator[Any]:
    """A transport whose streams are already open (the stack that opened them closes them)."""
    yield streams

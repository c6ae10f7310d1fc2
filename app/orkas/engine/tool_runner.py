"""Runs one round of tool calls and produces their results in declared order.

Every call gets exactly one result, whatever happens: an unknown tool, input its schema rejects,
an exception inside the tool, or an abort all become error results the model reads. Tools run one
after another here; parallel read-only batches come with the next issue.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

from orkas.core.errors import ToolInputError
from orkas.engine.abort import AbortSignal
from orkas.engine.events import Event, ToolEnd, ToolProgress, ToolStart
from orkas.engine.messages import TextBlock, ToolResultBlock, ToolUseBlock
from orkas.engine.providers.base import INVALID_INPUT_KEY
from orkas.engine.tools.base import Tool, ToolContext, ToolResult, ToolSet, error_result

log = logging.getLogger(__name__)

ABORTED_TEXT = "aborted: the user stopped the run before this tool call finished"
CANCEL_GRACE = 2.0  # seconds a cancelled tool gets to clean up before we stop waiting


def not_run_results(calls: Sequence[ToolUseBlock], reason: str) -> tuple[ToolResultBlock, ...]:
    return tuple(
        ToolResultBlock(tool_use_id=c.id, content=(TextBlock(text=reason),), is_error=True) for c in calls
    )


class _Finished:
    __slots__ = ()


_FINISHED = _Finished()


class ToolRunner:
    def __init__(self, tools: ToolSet, *, workspace: Path, signal: AbortSignal) -> None:
        self.tools = tools
        self.workspace = workspace
        self.signal = signal
        self.results: tuple[ToolResultBlock, ...] = ()
        self.elapsed = 0.0

    async def run(self, calls: Sequence[ToolUseBlock]) -> AsyncGenerator[Event, None]:
        """Yield tool events; afterwards `results` holds one result per call, in order."""
        results: list[ToolResultBlock] = []
        try:
            for call in calls:
                if self.signal.aborted:
                    results.append(not_run_results([call], ABORTED_TEXT)[0])
                    continue
                yield ToolStart(id=call.id, name=call.name, input=call.input)
                started = time.perf_counter()
                outcome: list[ToolResult] = []
                async for progress in self._execute(call, outcome):
                    yield progress
                result = outcome[0]
                duration = time.perf_counter() - started
                self.elapsed += duration
                results.append(
                    ToolResultBlock(tool_use_id=call.id, content=result.content, is_error=result.is_error)
                )
                yield ToolEnd(
                    id=call.id,
                    name=call.name,
                    content=result.content,
                    details=result.details,
                    is_error=result.is_error,
                    duration=duration,
                )
        finally:
            # Even if our consumer went away mid-round, every call has a result.
            answered = {r.tool_use_id for r in results}
            results.extend(not_run_results([c for c in calls if c.id not in answered], ABORTED_TEXT))
            self.results = tuple(results)

    async def _execute(
        self, call: ToolUseBlock, outcome: list[ToolResult]
    ) -> AsyncGenerator[ToolProgress, None]:
        tool = self.tools.get(call.name)
        problem = self._check(call, tool)
        if problem is not None or tool is None:
            outcome.append(problem or error_result("unknown tool"))
            return
        queue: asyncio.Queue[str | _Finished] = asyncio.Queue()
        ctx = ToolContext(
            workspace=self.workspace, signal=self.signal, tool_use_id=call.id, progress=queue.put_nowait
        )
        task = asyncio.create_task(tool.execute(call.input, ctx))
        task.add_done_callback(lambda _t: queue.put_nowait(_FINISHED))
        unregister = self.signal.on_abort(lambda: queue.put_nowait(_FINISHED))
        try:
            while not isinstance(item := await queue.get(), _Finished):
                yield ToolProgress(id=call.id, name=call.name, message=item)
        finally:
            unregister()
            if not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=CANCEL_GRACE)
        outcome.append(self._result(call, task))

    def _check(self, call: ToolUseBlock, tool: Tool | None) -> ToolResult | None:
        if tool is None:
            available = ", ".join(self.tools.names) or "none"
            return error_result(f"unknown tool {call.name!r}; available tools: {available}")
        if INVALID_INPUT_KEY in call.input:
            return error_result(
                f"the input for {call.name!r} was not valid JSON (was the output cut off?): "
                f"{str(call.input[INVALID_INPUT_KEY])[:500]!r}"
            )
        try:
            self.tools.validate(call.name, call.input)
        except ToolInputError as e:
            return error_result(str(e))
        return None

    def _result(self, call: ToolUseBlock, task: asyncio.Task[ToolResult]) -> ToolResult:
        if task.cancelled() or not task.done():
            return error_result(ABORTED_TEXT)
        error = task.exception()
        if error is not None:
            log.error("tool %s failed", call.name, exc_info=error)
            return error_result(f"tool {call.name!r} failed: {type(error).__name__}: {error}")
        result = task.result()
        if not isinstance(result, ToolResult):
            return error_result(f"tool {call.name!r} returned {type(result).__name__}, not a ToolResult")
        return result

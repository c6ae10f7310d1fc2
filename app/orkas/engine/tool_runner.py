"""Runs one round of tool calls and produces their results in declared order.

Adjacent read-only calls form a batch that runs concurrently (at most `max_parallel` at once); any
other call is a batch of its own, a barrier. Results are committed in the order the model declared
them, whatever order they finish in. Every call gets exactly one result: an unknown tool, input its
schema rejects, an exception inside the tool, an abort, or the loop guard all become error results
the model reads.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import traceback
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import replace
from pathlib import Path
from typing import Any

from orkas.core.errors import ToolInputError
from orkas.engine.abort import AbortSignal
from orkas.engine.budget import Budget
from orkas.engine.consent import Ask, Permissions, Question
from orkas.engine.events import (
    Event,
    LoopWarning,
    RunWarning,
    ToolEnd,
    ToolProgress,
    ToolStart,
    permission_request,
)
from orkas.engine.hooks import Hooks, fire
from orkas.engine.loop_guard import LoopGuard
from orkas.engine.messages import TextBlock, ToolResultBlock, ToolUseBlock
from orkas.engine.providers.base import INVALID_INPUT_KEY
from orkas.engine.run_config import MAX_PARALLEL
from orkas.engine.tools.base import Tool, ToolContext, ToolResult, ToolSet, error_result, summarize
from orkas.engine.tools.untrusted import note_in, outside_source

log = logging.getLogger(__name__)

ABORTED_TEXT = "aborted: the user stopped the run before this tool call finished"
CLOSED = "Orkas was closed"  # the reason a run ends when the app quits (the person stopped nothing)
CANCEL_GRACE = 2.0  # seconds a cancelled tool gets to clean up before we stop waiting


def not_run_results(calls: Sequence[ToolUseBlock], reason: str) -> tuple[ToolResultBlock, ...]:
    return tuple(ToolResultBlock(tool_use_id=c.id, content=(TextBlock(text=reason),), is_error=True) for c in calls)


def batches(calls: Sequence[ToolUseBlock], tools: ToolSet) -> list[list[ToolUseBlock]]:
    """Maximal runs of adjacent read-only calls; every other call alone."""
    out: list[list[ToolUseBlock]] = []
    extend = False  # may the next read-only call join the last batch?
    for call in calls:
        tool = tools.get(call.name)
        read_only = tool is not None and tool.read_only
        if read_only and extend:
            out[-1].append(call)
        else:
            out.append([call])
        extend = read_only
    return out


# A no nobody gave: the model must not take it for the person's refusal (and stop offering, or argue with them).
# The tool's own words stay between the two (which file, which host): they say "the user did not approve".
UNASKED = "Nobody was asked ({why}): {tool} needs approval. The tool said:"
# The person was asked and answered no: said as such (the tool's own words only say its approval was not given).
DENIED = "The user was asked and denied it."
UNASKED_END = (
    "This is not the person's refusal: say what you would have done and that it needs their approval, or do it "
    "in a way that needs none."
)


class ToolRunner:
    def __init__(
        self,
        tools: ToolSet,
        *,
        workspace: Path,
        signal: AbortSignal,
        guard: LoopGuard | None = None,
        max_parallel: int = MAX_PARALLEL,
        permissions: Permissions | None = None,
        budget: Budget | None = None,
        hooks: Hooks | None = None,
    ) -> None:
        if max_parallel < 1:
            raise ValueError(f"max_parallel must be at least 1, got {max_parallel!r}")
        self.tools = tools
        self.workspace = workspace
        self.signal = signal
        self.guard = guard or LoopGuard()
        self.permissions = permissions or Permissions(workspace=workspace)
        self.state: dict[str, Any] = {}  # run-scoped tool state, e.g. which files were read
        self.budget = budget
        self.max_parallel = max_parallel
        self.hooks = hooks
        self.results: tuple[ToolResultBlock, ...] = ()
        self.elapsed = 0.0
        self.loop_stop: str | None = None  # set when the loop guard stopped the run
        self.ends_turn = False  # a result of the last round asked to end the turn (ToolResult.ends_turn)
        self._unasked: dict[str, str] = {}  # call id → why its question's no was nobody's
        self._denied: set[str] = set()  # call ids whose question the person answered no
        self._asked: dict[str, list[str]] = {}  # call id → the questions it asked (their wait is not its time)

    async def run(self, calls: Sequence[ToolUseBlock], *, truncated: bool = False) -> AsyncGenerator[Event, None]:
        """Yield tool events; afterwards `results` holds one result per call, in declared order.
        `truncated`: the reply hit its output limit, so unparseable input means "cut off"."""
        done: dict[str, ToolResultBlock] = {}
        started = time.perf_counter()
        self.ends_turn = False
        try:
            for batch in batches(calls, self.tools):
                if self.signal.aborted or self.loop_stop:
                    break
                runnable: list[ToolUseBlock] = []
                notes: dict[str, str] = {}
                for call in batch:
                    count = self.guard.see(call)
                    if count >= self.guard.stop_at:
                        self.loop_stop = f"{call.name} was called {count} times in a row with the same input"
                        break
                    if count >= self.guard.warn_at:
                        notes[call.id] = self.guard.note(call.name)
                        yield LoopWarning(name=call.name, count=count, stop_at=self.guard.stop_at)
                    runnable.append(call)
                async with aclosing(self._run_batch(runnable, done, notes, truncated)) as events:
                    async for event in events:
                        yield event
        finally:
            self.elapsed += time.perf_counter() - started
            reason = f"not run: the run was stopped because {self.loop_stop}" if self.loop_stop else self._aborted()
            self.results = tuple(done.get(c.id) or not_run_results([c], reason)[0] for c in calls)

    async def _run_batch(
        self,
        calls: list[ToolUseBlock],
        done: dict[str, ToolResultBlock],
        notes: dict[str, str],
        truncated: bool,
    ) -> AsyncGenerator[Event, None]:
        queue: asyncio.Queue[_Item] = asyncio.Queue()
        pending: dict[str, tuple[ToolUseBlock, asyncio.Task[ToolResult], float]] = {}
        limit = asyncio.Semaphore(self.max_parallel)
        for call in calls:
            tool = self.tools.get(call.name)
            yield ToolStart(id=call.id, name=call.name, input=call.input, summary=summarize(tool, call.input))
            problem = self._check(call, tool, truncated)
            if problem is not None or tool is None:
                yield self._finish(call, problem or error_result("unknown tool"), time.perf_counter(), done, notes)
                continue
            ctx = ToolContext(
                workspace=self.workspace,
                signal=self.signal,
                tool_use_id=call.id,
                progress=functools.partial(_report, queue, "progress", call),
                ask=functools.partial(self._ask, queue, call),
                state=self.state,
                budget=self.budget,
            )
            warn = functools.partial(_report, queue, "warning", call)  # a hook's word for the person
            task = asyncio.create_task(_limited(limit, tool, call, ctx, self.hooks, warn))
            task.add_done_callback(functools.partial(_finished, queue, call))
            pending[call.id] = (call, task, time.perf_counter())
        unregister = self.signal.on_abort(lambda: queue.put_nowait(("abort", None, "")))
        try:
            while pending:
                kind, who, message = await queue.get()
                if kind == "abort":
                    break
                if who is None or who.id not in pending:
                    continue
                if kind == "progress":
                    yield ToolProgress(id=who.id, name=who.name, message=str(message))
                elif kind == "warning":
                    yield RunWarning(message=str(message))
                elif kind == "permission":
                    assert isinstance(message, Question)
                    self._asked.setdefault(who.id, []).append(message.id)
                    yield permission_request(message, who.id)
                else:
                    call, task, began = pending.pop(who.id)
                    yield self._finish(call, self._result(call, task), began, done, notes)
            for _call, task, _began in pending.values():
                task.cancel()
            if pending:
                await asyncio.wait({task for _, task, _ in pending.values()}, timeout=CANCEL_GRACE)
            for call, task, began in list(pending.values()):
                pending.pop(call.id)
                # A tool that finished just as the stop came keeps its real result.
                yield self._finish(call, self._result(call, task), began, done, notes)
        finally:
            unregister()
            self.permissions.deny_all()  # nobody answers questions of a batch that is over
            for _call, task, _began in pending.values():  # our consumer went away mid-batch
                task.cancel()

    async def _ask(self, queue: asyncio.Queue[_Item], call: ToolUseBlock, ask: Ask) -> bool:
        decided = self.permissions.immediate(ask)
        if decided is not None:
            return decided
        question = self.permissions.question(ask)
        queue.put_nowait(("permission", call, question))
        allowed = await self.permissions.wait(question)
        if why := self.permissions.why(question.id):
            self._unasked[call.id] = why
        elif not allowed:
            self._denied.add(call.id)
        return allowed

    def _finish(
        self,
        call: ToolUseBlock,
        result: ToolResult,
        began: float,
        done: dict[str, ToolResultBlock],
        notes: dict[str, str],
    ) -> ToolEnd:
        content = result.content
        self.ends_turn = self.ends_turn or result.ends_turn
        source = outside_source(call.name, content, result.is_error)
        if source is not None:  # the model has now read it: memory and skill writes ask while it can see it
            note_in(self.state, source)
        if call.id in notes:
            content = (*content, TextBlock(text=notes[call.id]))
        why, denied = self._unasked.pop(call.id, ""), call.id in self._denied
        self._denied.discard(call.id)
        if (why or denied) and result.is_error:  # whose no it was frames the tool's own words, as one text
            said = " ".join(b.text for b in content if isinstance(b, TextBlock))
            framed = f"{UNASKED.format(tool=call.name, why=why)} {said} {UNASKED_END}" if why else f"{DENIED} {said}"
            content = (TextBlock(text=framed), *(b for b in content if not isinstance(b, TextBlock)))
        done[call.id] = ToolResultBlock(tool_use_id=call.id, content=content, is_error=result.is_error)
        waited = sum(self.permissions.waited(question) for question in self._asked.pop(call.id, ()))
        duration = max(0.0, time.perf_counter() - began - waited)
        # Name, size and outcome only: a command's or a file's text never reaches the log.
        log.info(
            "tool %s %s in %.0f ms (input %d chars)",
            call.name,
            "failed" if result.is_error else "ok",
            duration * 1000,
            sum(len(str(value)) for value in call.input.values()),
        )
        return ToolEnd(
            id=call.id,
            name=call.name,
            content=content,
            details=result.details,
            is_error=result.is_error,
            duration=duration,
            stopped=result.is_error and self.signal.aborted,
        )

    def _check(self, call: ToolUseBlock, tool: Tool | None, truncated: bool) -> ToolResult | None:
        if tool is None:
            available = ", ".join(self.tools.names) or "none"
            return error_result(f"unknown tool {call.name!r}; available tools: {available}")
        if INVALID_INPUT_KEY in call.input:
            if truncated:
                return error_result(
                    f"this {call.name!r} call was cut off by the output limit before its input was complete. "
                    "Split the content into smaller pieces (several smaller calls) and try again."
                )
            raw = str(call.input[INVALID_INPUT_KEY])[:500]
            return error_result(f"the input for {call.name!r} was not valid JSON: {raw!r}")
        try:
            self.tools.validate(call.name, call.input)
        except ToolInputError as e:
            return error_result(str(e))
        return None

    def _aborted(self) -> str:
        """Why a call did not finish: the person's Stop, or the app quitting (said as such, not as their Stop)."""
        if self.signal.reason == CLOSED:
            return "aborted: Orkas was closed before this tool call finished"
        return ABORTED_TEXT

    def _result(self, call: ToolUseBlock, task: asyncio.Task[ToolResult]) -> ToolResult:
        if task.cancelled() or not task.done():
            return error_result(self._aborted())
        error = task.exception()
        if error is not None:
            # The frames, not the message: a command tool's error may quote the command.
            frames = "".join(traceback.format_tb(error.__traceback__))
            log.error("tool %s raised %s\n%s", call.name, type(error).__name__, frames)
            return error_result(f"tool {call.name!r} failed: {type(error).__name__}: {error}")
        result = task.result()
        if not isinstance(result, ToolResult):
            return error_result(f"tool {call.name!r} returned {type(result).__name__}, not a ToolResult")
        return result


_Item = tuple[str, ToolUseBlock | None, "str | Question"]


def _report(queue: asyncio.Queue[_Item], kind: str, call: ToolUseBlock, message: str | Question) -> None:
    queue.put_nowait((kind, call, message))


def _finished(queue: asyncio.Queue[_Item], call: ToolUseBlock, _task: object) -> None:
    queue.put_nowait(("done", call, ""))


async def _limited(
    limit: asyncio.Semaphore,
    tool: Tool,
    call: ToolUseBlock,
    ctx: ToolContext,
    hooks: Hooks | None,
    warn: Callable[[str], None],
) -> ToolResult:
    async with limit:
        if hooks is None:
            return await tool.execute(call.input, ctx)
        payload = {"tool_name": call.name, "tool_input": dict(call.input), "tool_use_id": call.id}
        before = await fire(hooks, "PreToolUse", payload, ctx.ask, call.name)
        for note in before.notes:
            warn(note)
        if before.block is not None:
            return error_result(f"A PreToolUse hook blocked this call: {before.block}")
        result = await tool.execute(call.input, ctx)
        said = "\n".join(b.text for b in result.content if isinstance(b, TextBlock))
        response = {"content": said, "is_error": result.is_error}
        after = await fire(hooks, "PostToolUse", {**payload, "tool_response": response}, ctx.ask, call.name)
        for note in after.notes:
            warn(note)
        extra = [text for text in (after.block and f"A PostToolUse hook says: {after.block}", after.context) if text]
        if not extra:
            return result
        return replace(result, content=(*result.content, TextBlock(text="\n".join(extra))))

"""Small real tools used to exercise the run loop."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from orkas.engine.messages import ImageBlock, TextBlock
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@dataclass
class Echo:
    name: str = "echo"
    description: str = "Echo the text back."
    read_only: bool = True
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {
            "type": "object",
            "properties": {"text": {"type": "string"}, "times": {"type": "integer", "minimum": 1}},
            "required": ["text"],
            "additionalProperties": False,
        }
    )
    calls: list[Mapping[str, Any]] = field(default_factory=list)

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls.append(input)
        return text_result(input["text"] * input.get("times", 1), details={"echoed": True})


@dataclass
class Fails:
    """Reports an error result (a model-caused failure)."""

    name: str = "fails"
    description: str = "Always reports an error."
    read_only: bool = True
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return error_result("the thing you asked for does not exist")


@dataclass
class Crashes:
    """Raises: a bug inside a tool."""

    name: str = "crashes"
    description: str = "Raises an exception."
    read_only: bool = False
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        raise ZeroDivisionError(f"division by zero in the tool {input.get('command', '')}".strip())


@dataclass
class Slow:
    """Waits until released or cancelled; records what happened."""

    name: str = "slow"
    description: str = "Takes a long time."
    read_only: bool = False
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    started: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: bool = False
    finished: int = 0

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        self.started.set()
        ctx.progress("working")
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        self.finished += 1
        return text_result("slow done")


@dataclass
class Picture:
    name: str = "picture"
    description: str = "Returns an image."
    read_only: bool = True
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(content=(TextBlock(text="a red pixel"), ImageBlock(data=PNG_1PX, media_type="image/png")))


@dataclass
class StopsTheRun:
    """Aborts the run's signal from inside, as a user clicking stop mid-batch would."""

    name: str = "stopper"
    description: str = "Stops the run."
    read_only: bool = False  # a barrier: calls after it wait for it
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        ctx.signal.abort("user pressed stop")
        return text_result("stopping")

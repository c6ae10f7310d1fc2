"""A file tool that also says the instruction files of the folder it touched, the first time (nested instructions).

An agent working at the workspace's root reads `pkg/AGENTS.md`'s rules only when it starts working in `pkg/`, as
Claude Code joins a subfolder's CLAUDE.md: the wrapper runs the tool, then asks the conversation's
`ProjectInstructions` what that folder adds and appends it to the result — so the model reads the rules before it
acts there, and from the next turn they are in the prompt. A tool that failed touched nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from orkas.engine.instructions import ProjectInstructions
from orkas.engine.messages import TextBlock
from orkas.engine.tools.base import Tool, ToolContext, ToolResult

TOUCHING = frozenset({"read_file", "stat_file", "list_files", "search_files", "grep_files", "write_file", "edit_file"})


class NearbyInstructions:
    """`tool`, unchanged for the model and the product, whose results carry a newly touched folder's instructions."""

    def __init__(self, tool: Tool, project: ProjectInstructions) -> None:
        self.tool = tool
        self.project = project

    def __getattr__(self, name: str) -> Any:  # summarize, read_only, the schema…: the tool's own
        return getattr(self.tool, name)

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def description(self) -> str:
        return self.tool.description

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return self.tool.input_schema

    @property
    def read_only(self) -> bool:
        return self.tool.read_only

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        result = await self.tool.execute(input, ctx)
        raw = input.get("path", ".")
        if result.is_error or not isinstance(raw, str):
            return result
        given = Path(raw).expanduser()
        # A member in its own worktree names paths in it: the same subfolder of the conversation's folder.
        inside = given.is_absolute() and given.is_relative_to(ctx.workspace)
        relative = given.relative_to(ctx.workspace) if inside else given
        if relative.is_absolute():
            return result
        said = self.project.touch(self.project.folder / relative)
        if said is None:
            return result
        return replace(result, content=(*result.content, TextBlock(text=said)))


def with_nearby(tools: Sequence[Tool], project: ProjectInstructions) -> list[Tool]:
    return [NearbyInstructions(t, project) if t.name in TOUCHING else t for t in tools]

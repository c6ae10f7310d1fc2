"""Tools the agent can call: the protocol and the built-in tools."""

from orkas.engine.tools.base import Tool, ToolContext, ToolResult, error_result, text_result

__all__ = ["Tool", "ToolContext", "ToolResult", "error_result", "text_result"]

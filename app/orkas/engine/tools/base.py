"""The tool contract.

A tool is a name, a description written for the model, a JSON schema, a `read_only` flag and an
async `execute(input, ctx)`. Its result carries `content` for the model and `details` for the UI.
A mistake the model made (bad input, a missing file) is an error *result* the model reads and
recovers from; only bugs raise — and even those the run loop turns into an error result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from orkas.core.errors import ToolInputError
from orkas.engine.abort import AbortSignal
from orkas.engine.budget import Budget
from orkas.engine.consent import Ask
from orkas.engine.messages import TextBlock, ToolResultContent
from orkas.engine.providers.base import ToolDefinition

if TYPE_CHECKING:
    from jsonschema.protocols import Validator


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    content: tuple[ToolResultContent, ...]
    details: Mapping[str, Any] | None = None
    is_error: bool = False
    # The turn ends after this round, with no further model call: what the tool did is the answer
    # (a hand-off to another agent whose reply is final). The results are still recorded first.
    ends_turn: bool = False


def text_result(text: str, details: Mapping[str, Any] | None = None) -> ToolResult:
    return ToolResult(content=(TextBlock(text=text),), details=details)


def error_result(text: str, details: Mapping[str, Any] | None = None) -> ToolResult:
    return ToolResult(content=(TextBlock(text=text),), details=details, is_error=True)


async def _deny(_ask: Ask) -> bool:
    return False


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """What a running tool may use. `progress` emits a `tool_progress` event; `ask` asks the person
    for consent (a `permission_request` event) and returns whether the operation may go ahead."""

    workspace: Path
    signal: AbortSignal
    tool_use_id: str
    progress: Callable[[str], None] = field(default=lambda _message: None)
    ask: Callable[[Ask], Awaitable[bool]] = _deny
    state: dict[str, Any] = field(default_factory=dict)  # shared by the calls of one run (read baselines …)
    budget: Budget | None = None  # the run's spending limits: a tool that calls a model itself keeps to them


class Tool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]: ...

    @property
    def read_only(self) -> bool: ...

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult: ...


SUMMARY_CHARS = 90


def summarize(tool: Tool | None, input: Mapping[str, Any]) -> str:
    """A call in one line, as every view shows it (the window's card, the phone, `orkas run`): the tool's own
    `summarize(input)` where it has one, else the first string argument its schema requires (the command, the
    path, the query), else the first string given. Whitespace flattened, cut to SUMMARY_CHARS."""
    own = getattr(tool, "summarize", None)
    text = own(input) if callable(own) else None
    if text is None:
        schema = tool.input_schema if tool is not None else {}
        properties = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
        required = [k for k in schema.get("required", ()) if properties.get(k, {}).get("type") == "string"]
        keys = [*required, *(k for k, v in properties.items() if v.get("type") == "string")]
        text = next((input[k] for k in keys if isinstance(input.get(k), str)), None)
        text = text or next((v for v in input.values() if isinstance(v, str)), "")
    flat = " ".join(str(text).split())
    return flat if len(flat) <= SUMMARY_CHARS else flat[: SUMMARY_CHARS - 1] + "…"


class ToolSet:
    """The tools of a run, by name, each schema checked and compiled once, when that tool is first
    called (jsonschema takes ~0.1 s to import: a run should show it started before paying for it;
    our schemas are checked by the tests, a plugin's at its first call)."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, Validator] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
        self.definitions: tuple[ToolDefinition, ...] = tuple(
            ToolDefinition(name=t.name, description=t.description, input_schema=t.input_schema)
            for t in self._tools.values()
        )

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def _validator(self, name: str) -> Validator:
        validator = self._validators.get(name)
        if validator is None:
            import jsonschema

            schema = self._tools[name].input_schema
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(dict(schema))
            validator = self._validators[name] = cls(schema)
        return validator

    def validate(self, name: str, input: Mapping[str, Any]) -> None:
        """Raise `ToolInputError` naming every problem, in words the model can act on."""
        errors = sorted(self._validator(name).iter_errors(input), key=lambda e: list(e.absolute_path))
        if not errors:
            return
        lines = []
        for error in errors[:8]:
            where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
            lines.append(f"- {where}: {error.message}")
        raise ToolInputError(f"invalid input for tool {name!r}:\n" + "\n".join(lines))

"""Everything a run tells its caller, as one typed vocabulary.

`run()` yields these; a run always ends with exactly one `Done` or one `Error`. Event names (`type`)
are a public contract shared with the CLI's JSON output, the UI and the phone mirror: spell new ones
once, here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from orkas.engine.messages import StopReason, ToolResultContent, Usage

if TYPE_CHECKING:
    from orkas.engine.consent import Question

ErrorKind = Literal[
    "auth", "rate_limit", "context_overflow", "timeout", "provider", "aborted", "loop", "budget", "hook", "internal"
]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStart:
    session_id: str
    model: str
    type: Literal["run_start"] = "run_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingDelta:
    text: str
    type: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStart:
    id: str
    name: str
    input: Mapping[str, Any]
    summary: str = ""  # the call in one line, from the tool itself (tools/base.py `summarize`): no view guesses
    type: Literal["tool_start"] = "tool_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolProgress:
    id: str
    name: str
    message: str
    type: Literal["tool_progress"] = "tool_progress"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolEnd:
    id: str
    name: str
    content: tuple[ToolResultContent, ...]  # what the model sees
    details: Mapping[str, Any] | None  # what the UI shows
    is_error: bool
    duration: float  # seconds
    stopped: bool = False  # the person's Stop ended it unfinished: not a failure to report as one
    type: Literal["tool_end"] = "tool_end"


@dataclass(frozen=True, slots=True, kw_only=True)
class Retry:
    attempt: int  # 1 for the first retry
    reason: str
    wait: float  # seconds before the next attempt
    type: Literal["retry"] = "retry"


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageUpdate:
    usage: Usage  # this model call
    total: Usage  # the run so far
    cost: float | None = None  # US dollars for this call; None when the price is unknown
    total_cost: float | None = None
    # The call was stopped or cut before the provider's final count: `usage` is what it had counted by then (none, for
    # a provider that counts only at the end), so at least this was spent; the totals are lower bounds from here on.
    partial: bool = False
    type: Literal["usage"] = "usage"


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """The history was made smaller to fit the context window."""

    method: Literal["mask", "summary", "shrink"]
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    type: Literal["compaction"] = "compaction"


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopWarning:
    """The model repeated the same tool call; at `stop_at` the run stops."""

    name: str
    count: int
    stop_at: int
    type: Literal["loop_warning"] = "loop_warning"


@dataclass(frozen=True, slots=True, kw_only=True)
class SteerApplied:
    """A message the user sent while the run was busy joined the conversation."""

    message_id: str
    text: str
    type: Literal["steer_applied"] = "steer_applied"


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRequest:
    """A tool wants to do something that needs the person's consent; the run waits for the answer
    (`Permissions.answer(id, decision)`): allow_once, allow_run, always, or deny."""

    id: str
    tool_use_id: str
    tool: str
    categories: tuple[str, ...]
    preview: str
    options: tuple[str, ...] = ("allow_once", "allow_run", "always", "deny")
    level: str = "workspace_write"  # read_only | workspace_write | runs_program | dangerous
    effect: str = ""  # what approval grants: "" | "network" (this command only) | "unconfined"
    type: Literal["permission_request"] = "permission_request"


def permission_request(question: Question, tool_use_id: str) -> PermissionRequest:
    """The event that shows a pending consent question, on the tool call that asks it."""
    ask = question.ask
    return PermissionRequest(
        id=question.id,
        tool_use_id=tool_use_id,
        tool=ask.tool,
        categories=ask.categories,
        preview=ask.preview,
        options=ask.options,
        level=ask.level,
        effect=ask.effect,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderFallback:
    """The model call moved to another key, provider or model before anything was streamed."""

    reason: str
    failed: str
    using: str
    message: str
    type: Literal["provider_fallback"] = "provider_fallback"


@dataclass(frozen=True, slots=True, kw_only=True)
class RunWarning:
    """Something the person should know that did not stop the run."""

    message: str
    type: Literal["warning"] = "warning"


@dataclass(frozen=True, slots=True, kw_only=True)
class Timings:
    provider: float = 0.0
    tools: float = 0.0
    retry_wait: float = 0.0
    compaction: float = 0.0
    total: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Done:
    text: str  # the final assistant text of the turn
    stop_reason: StopReason | Literal["max_tool_loops"]
    usage: Usage
    tool_loops: int
    timings: Timings = field(default_factory=Timings)
    cost: float | None = None  # US dollars for the run; None when a price was unknown
    type: Literal["done"] = "done"


@dataclass(frozen=True, slots=True, kw_only=True)
class Error:
    kind: ErrorKind
    message: str  # one sentence a person understands
    partial_text: str = ""  # text streamed before the failure (kept in history, marked partial)
    cause: str = ""  # the provider's failure (ProviderError.kind: overloaded, billing, server…), if it was one
    attempts: int = 0  # how many times the call was tried before giving up
    usage: Usage = field(default_factory=Usage)
    tool_loops: int = 0
    cost: float | None = None  # US dollars spent before it ended; None when a price was unknown
    counted_so_far: bool = False  # a call ended before the provider's final count: `usage` and `cost` are lower bounds
    type: Literal["error"] = "error"

    @property
    def aborted(self) -> bool:
        return self.kind == "aborted"


Event = (
    RunStart
    | TextDelta
    | ThinkingDelta
    | ToolStart
    | ToolProgress
    | ToolEnd
    | Retry
    | UsageUpdate
    | Compaction
    | LoopWarning
    | SteerApplied
    | PermissionRequest
    | ProviderFallback
    | RunWarning
    | Done
    | Error
)


def event_dict(event: Event) -> dict[str, Any]:
    """The event as plain JSON-ready data: the wire form shared by the CLI, the API and the mirror."""
    data: dict[str, Any] = {"type": event.type}
    data.update((f.name, plain(getattr(event, f.name))) for f in dataclasses.fields(event) if f.name != "type")
    return data


def plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    return value

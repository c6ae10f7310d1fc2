"""The vendor-neutral message model.

A history is a sequence of `Message`: user and assistant messages the model sees, plus app-only
`Notice` entries the product shows but the model never does. Providers translate these blocks in
both directions; vendor extras live in `provider_details`, never in ids or text.

Tool results travel inside user messages (as the Anthropic API and most transcripts do): an
assistant message with tool calls is followed by a user message whose leading blocks are exactly
the results for those calls, in declared order. `orkas.engine.session` enforces that pairing.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

StopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn", "error", "aborted", "handed_off"
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TextBlock:
    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageBlock:
    data: str  # base64, no data: prefix
    media_type: str  # image/png, image/jpeg, image/gif, image/webp
    type: Literal["image"] = "image"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUseBlock:
    id: str
    name: str
    input: Mapping[str, Any]
    type: Literal["tool_use"] = "tool_use"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultBlock:
    tool_use_id: str
    content: tuple[TextBlock | ImageBlock, ...]
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingBlock:
    """Model reasoning. A redacted block has no readable text; its opaque payload is in `signature`."""

    text: str
    signature: str | None = None
    redacted: bool = False
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachmentBlock:
    """A file the person attached to their message: what it is and where the agent can read it. Kept
    structured in the transcript (a name like `report (1).pdf` survives exactly, and typed text that
    happens to look like an attachment line stays text); turned into a line of text only at the
    provider boundary (convert.py, `attachment_line`)."""

    name: str
    size: int
    media_type: str
    path: str  # the stored copy, or the file where it lies in the workspace or a granted folder
    type: Literal["attachment"] = "attachment"


ContentBlock = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | AttachmentBlock
ToolResultContent = TextBlock | ImageBlock


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token counts of a call. `input_tokens` excludes cache reads and writes (Anthropic's meaning;
    adapters normalize to it)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def counted(self) -> bool:
        """Any token counted at all: a provider that said nothing (yet) leaves all four at 0."""
        return any((self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_write_tokens))

    @property
    def prompt_tokens(self) -> int:
        """Everything the request sent: fresh input plus cache reads and writes."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage:
    content: tuple[ContentBlock, ...]
    id: str = field(default_factory=new_id)
    created_at: float = field(default_factory=time.time)
    role: Literal["user"] = "user"


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage:
    """What one model call produced. `provider`/`model` record who, so reasoning blocks are replayed
    verbatim only to the model that signed them. `partial` marks text kept from a failed stream."""

    content: tuple[ContentBlock, ...]
    provider: str
    model: str
    stop_reason: StopReason = "end_turn"
    usage: Usage = field(default_factory=Usage)
    partial: bool = False
    provider_details: Mapping[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_id)
    created_at: float = field(default_factory=time.time)
    role: Literal["assistant"] = "assistant"

    @property
    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolUseBlock))

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """An app-only entry (a status line, an approval record). Never sent to a model."""

    kind: str
    text: str
    id: str = field(default_factory=new_id)
    created_at: float = field(default_factory=time.time)
    # Facts the UI words for people (an error's kind, cause and attempts): strings and numbers only.
    detail: Mapping[str, str | int] = field(default_factory=dict)
    role: Literal["app"] = "app"


LLMMessage = UserMessage | AssistantMessage
Message = UserMessage | AssistantMessage | Notice


def user_text(text: str, images: Sequence[ImageBlock] = ()) -> UserMessage:
    return UserMessage(content=(TextBlock(text=text), *images))


def text_of(blocks: Sequence[ContentBlock]) -> str:
    return "".join(b.text for b in blocks if isinstance(b, TextBlock))

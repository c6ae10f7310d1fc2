"""The one function that turns a stored history into what a provider may receive.

Everything provider-dependent about history lives here, so the run loop stays vendor-neutral:
app-only notices are dropped, reasoning is replayed only to the model that produced it, images
move out of tool results for providers that cannot take them there, and attached files become the
line of text that names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from orkas.engine.messages import (
    AssistantMessage,
    AttachmentBlock,
    ContentBlock,
    ImageBlock,
    LLMMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    UserMessage,
)
from orkas.engine.providers.base import Capabilities

IMAGE_MOVED = "[the tool returned an image; it follows in the next user content]"
IMAGE_OMITTED = "[image omitted: this model does not accept images]"


def to_llm_messages(
    history: Sequence[Message], capabilities: Capabilities, *, provider: str, model: str
) -> list[LLMMessage]:
    """Pure: the history as the given provider/model may see it. Never mutates `history`."""
    out: list[LLMMessage] = []
    for message in history:
        if isinstance(message, AssistantMessage):
            converted = _assistant(message, provider=provider, model=model)
            if converted is not None:
                out.append(converted)
        elif isinstance(message, UserMessage):
            out.append(_user(message, capabilities))
    return out


def _assistant(message: AssistantMessage, *, provider: str, model: str) -> AssistantMessage | None:
    same_model = message.provider == provider and message.model == model
    if same_model:
        return message
    # A signature is only valid for the model that made it; other models get the visible work only.
    kept = tuple(b for b in message.content if not isinstance(b, ThinkingBlock))
    if not kept:
        return None
    if len(kept) == len(message.content):
        return message
    return replace(message, content=kept)


def _user(message: UserMessage, capabilities: Capabilities) -> UserMessage:
    images_ok_in_results = capabilities.images and capabilities.images_in_tool_results
    needs_change = any(
        isinstance(b, AttachmentBlock)
        or (isinstance(b, ImageBlock) and not capabilities.images)
        or (isinstance(b, ToolResultBlock) and not images_ok_in_results and _has_image(b))
        for b in message.content
    )
    if not needs_change:
        return message
    head: list[ContentBlock] = []
    moved: list[ContentBlock] = []
    for block in message.content:
        if isinstance(block, AttachmentBlock):
            head.append(TextBlock(text=attachment_line(block)))
        elif isinstance(block, ImageBlock) and not capabilities.images:
            head.append(TextBlock(text=IMAGE_OMITTED))
        elif isinstance(block, ToolResultBlock) and _has_image(block):
            result, images = _split_tool_result(block, capabilities)
            head.append(result)
            moved.extend(images)
        else:
            head.append(block)
    return replace(message, content=(*head, *moved))


def attachment_line(block: AttachmentBlock) -> str:
    """What a model reads for an attached file: its name, size, type and where to read it."""
    return f"[attached file: {block.name} ({readable_size(block.size)}, {block.media_type}) at {block.path}]"


def readable_size(n: int) -> str:
    """A byte count as people read it: bytes, KB or MB."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def _has_image(block: ToolResultBlock) -> bool:
    return any(isinstance(c, ImageBlock) for c in block.content)


def _split_tool_result(
    block: ToolResultBlock, capabilities: Capabilities
) -> tuple[ToolResultBlock, list[ContentBlock]]:
    if capabilities.images_in_tool_results and capabilities.images:
        return block, []
    kept: list[TextBlock | ImageBlock] = []
    moved: list[ContentBlock] = []
    for part in block.content:
        if isinstance(part, ImageBlock):
            if capabilities.images:
                kept.append(TextBlock(text=IMAGE_MOVED))
                moved.append(part)
            else:
                kept.append(TextBlock(text=IMAGE_OMITTED))
        else:
            kept.append(part)
    if moved:
        moved.insert(0, TextBlock(text=f"Image output of tool call {block.tool_use_id}:"))
    return ToolResultBlock(tool_use_id=block.tool_use_id, content=tuple(kept), is_error=block.is_error), moved

"""A validator that applies the Anthropic Messages API's rules for a conversation.

Works on neutral messages or on the JSON `messages` array of a request. Returns a list of
violations (empty when the API would accept the history).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orkas.engine.convert import to_llm_messages
from orkas.engine.messages import Message
from orkas.engine.providers.anthropic.request import build_params
from orkas.engine.providers.base import Capabilities, ProviderRequest


def anthropic_violations(history: Sequence[Message], *, allow_leading_assistant: bool = False) -> list[str]:
    llm = to_llm_messages(history, Capabilities(), provider="p", model="m")
    params = build_params(ProviderRequest(model="m", messages=llm))
    return request_violations(params["messages"], allow_leading_assistant=allow_leading_assistant)


def request_violations(messages: list[dict[str, Any]], *, allow_leading_assistant: bool = False) -> list[str]:
    problems: list[str] = []
    if messages and messages[0]["role"] != "user" and not allow_leading_assistant:
        problems.append("the first message must be a user message")
    pending: list[str] = []
    for index, message in enumerate(messages):
        role = message["role"]
        content = message["content"]
        if role not in ("user", "assistant"):
            problems.append(f"#{index}: unknown role {role!r}")
        if isinstance(content, list) and not content:
            problems.append(f"#{index}: empty content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if block["type"] == "text" and not block["text"]:
                problems.append(f"#{index}: empty text block")
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        if pending:
            leading = [b.get("tool_use_id") for b in blocks[: len(pending)]]
            if role != "user" or leading != pending:
                problems.append(f"#{index}: tool_use {pending} must be answered first, in order (got {leading})")
            elif len(results) != len(pending):
                problems.append(f"#{index}: extra tool_result blocks {results[len(pending) :]}")
        elif results:
            problems.append(f"#{index}: tool_result {results} without a tool_use in the previous message")
        ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
        if ids and role != "assistant":
            problems.append(f"#{index}: tool_use in a {role} message")
        if len(set(ids)) != len(ids):
            problems.append(f"#{index}: duplicate tool_use ids")
        pending = ids
    if pending:
        problems.append(f"the last message's tool_use {pending} has no results")
    return problems

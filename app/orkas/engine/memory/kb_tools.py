"""Agent tools over knowledge bases: kb_search, kb_read, kb_list, and chat_search over past
conversations (the same retriever over an index of conversation transcripts)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias

from orkas.core.errors import ProviderError
from orkas.engine.memory.rerank import DEPTH
from orkas.engine.messages import TextBlock
from orkas.engine.tools.base import ToolContext, ToolResult, error_result, text_result
from orkas.engine.tools.untrusted import untrusted_result

if TYPE_CHECKING:
    from orkas.engine.memory.kb import Hit, KnowledgeBase
    from orkas.engine.memory.rerank import ModelReranker

# A base, or a function that opens it: the product passes the latter, so that numpy, faiss and the
# embedding model load on a worker thread the first time a tool searches, not when an agent is made.
Source: TypeAlias = "KnowledgeBase | Callable[[], KnowledgeBase]"


def _open(source: Source) -> KnowledgeBase:
    return source() if callable(source) else source


SNIPPET = 700


def _hits_text(hits: list[Hit], cite: Any) -> str:
    blocks = []
    for number, hit in enumerate(hits, start=1):
        text = hit.text if len(hit.text) <= SNIPPET else hit.text[:SNIPPET] + " …"
        blocks.append(f"[{number}] {cite(hit)} (score {hit.score:.3f})\n{text}")
    return "\n\n".join(blocks)


class KbSearch:
    name = "kb_search"
    description = (
        "Search the user's knowledge base (documents and folders they added) by meaning and by exact words. "
        "Returns passages with citations (source:start-end lines); quote and cite them. Use kb_read for more "
        "of a document."
    )
    read_only = True
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "k": {"type": "integer", "minimum": 1, "maximum": 30, "default": 8},
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    def __init__(self, kb: Source, reranker: ModelReranker | None = None) -> None:
        self.kb = kb
        self.reranker = reranker  # a second stage (rerank.py), when the person turned it on

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        k = input.get("k", 8)
        depth = max(k, DEPTH) if self.reranker is not None else k
        # Off the event loop: a search embeds the query and reads SQLite, and other streams go on meanwhile.
        hits = await asyncio.to_thread(lambda: _open(self.kb).search(input["query"], depth))
        if not hits:
            return text_result("no passage in the knowledge base matches; try other words", {"hits": []})
        details: dict[str, Any] = {}
        failed = ""
        if self.reranker is not None and len(hits) > 1:
            try:
                ranked = await self.reranker.rank(input["query"], [h.text for h in hits], ctx.signal, ctx.budget)
            except (ProviderError, ValueError) as e:  # the fused order stands
                failed = f"(no reranking by {self.reranker.model}: {e}; passages in search order)\n"
                details["rerank"] = {"model": self.reranker.model, "error": str(e)}
            else:
                hits = [hits[i] for i in ranked.order]
                details["rerank"] = {
                    "model": ranked.model,
                    "seconds": round(ranked.seconds, 3),
                    "input_tokens": ranked.input_tokens,
                    "output_tokens": ranked.output_tokens,
                    "cost": ranked.cost,
                }
        hits = hits[:k]
        details["hits"] = [{"citation": h.citation, "doc_id": h.doc_id, "score": h.score} for h in hits]
        result = untrusted_result(ctx, _hits_text(hits, lambda h: h.citation), "kb_search", details)
        if failed:  # our words, before the data element
            marked = result.content[0]
            assert isinstance(marked, TextBlock)
            result = replace(result, content=(TextBlock(text=failed + marked.text),))
        return result


class KbRead:
    name = "kb_read"
    description = "Read a knowledge-base document (its id as kb_search or kb_list show it) by line range."
    read_only = True
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "doc_id": {"type": "string", "minLength": 1},
            "start_line": {"type": "integer", "minimum": 1, "default": 1},
            "end_line": {"type": "integer", "minimum": 1},
        },
        "required": ["doc_id"],
        "additionalProperties": False,
    }
    MAX_LINES = 400

    def __init__(self, kb: Source) -> None:
        self.kb = kb

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        start = input.get("start_line", 1)
        end = input.get("end_line", start + self.MAX_LINES - 1)
        if end < start:
            return error_result("end_line is before start_line")
        try:
            text = await asyncio.to_thread(
                lambda: _open(self.kb).read(input["doc_id"], start, min(end, start + self.MAX_LINES - 1))
            )
        except KeyError:
            return error_result(f"no document {input['doc_id']!r} in the knowledge base; kb_list shows them")
        numbered = "\n".join(f"{n:>5}  {line}" for n, line in enumerate(text.split("\n"), start=start))
        return untrusted_result(ctx, numbered or "(no lines in that range)", f"kb_read {input['doc_id']}")


class KbList:
    name = "kb_list"
    description = "List the documents in the user's knowledge base."
    read_only = True
    input_schema: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

    def __init__(self, kb: Source) -> None:
        self.kb = kb

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        documents = await asyncio.to_thread(lambda: _open(self.kb).documents())
        if not documents:
            return text_result("the knowledge base is empty")
        listing = "\n".join(f"- {d['id']} ({d['chunks']} passages)" for d in documents)
        return untrusted_result(ctx, listing, "kb_list")


MESSAGE_LINE = re.compile(r"^\[(?P<message>[\w-]+)\] (?P<role>user|assistant): ", re.MULTILINE)


class ChatSearch:
    """Past conversations, indexed a few messages per document (`chat/<conversation id>/<first message
    id>`, one line per message starting `[<message id>] role: `), searched with the same hybrid
    retriever."""

    name = "chat_search"
    description = (
        "Search the user's past conversations (what was said and decided before). Returns passages citing "
        "the conversation and message."
    )
    read_only = True
    input_schema: Mapping[str, Any] = KbSearch.input_schema

    def __init__(self, kb: Source) -> None:
        self.kb = kb

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        # Off the event loop: a search embeds the query and reads SQLite, and other streams go on meanwhile.
        hits = await asyncio.to_thread(lambda: _open(self.kb).search(input["query"], input.get("k", 8)))
        if not hits:
            return text_result("no past conversation matches; try other words", {"hits": []})

        def cite(hit: Hit) -> str:
            first = MESSAGE_LINE.search(hit.text)
            where = f", message {first.group('message')}" if first else ""
            return f"conversation “{hit.source}” ({_conversation(hit.doc_id)}{where})"

        details = {
            "hits": [
                {
                    "conversation": _conversation(h.doc_id),
                    "messages": [m.group("message") for m in MESSAGE_LINE.finditer(h.text)],
                    "score": h.score,
                }
                for h in hits
            ]
        }
        return untrusted_result(ctx, _hits_text(hits, cite), "chat_search", details)


def _conversation(doc_id: str) -> str:
    """`chat/<conversation>/<message>` (or the older `chat/<conversation>`) → the conversation id."""
    return doc_id.removeprefix("chat/").split("/", 1)[0]

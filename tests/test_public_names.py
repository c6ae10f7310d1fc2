"""Every entry point an issue promised by name exists exactly as written: checks outside this
repository import them. A rename breaks this test before it breaks them."""

from __future__ import annotations

import importlib
import inspect

import pytest

PROMISED = [
    ("orkas.engine.memory", "KnowledgeBase"),
    ("orkas.engine.memory", "scan_memory_text"),
    ("orkas.engine.memory", "Finding"),
    ("orkas.engine.sandbox", "PathPolicy"),
    ("orkas.engine.sandbox", "classify_command"),
    ("orkas.engine.sandbox", "CommandRisk"),
    ("orkas.engine.tokens", "estimate_tokens"),
]


@pytest.mark.parametrize(("module", "name"), PROMISED, ids=[f"{m}.{n}" for m, n in PROMISED])
def test_a_promised_name_imports(module: str, name: str) -> None:
    value = getattr(importlib.import_module(module), name)
    assert value is not None
    exec(f"from {module} import {name}", {})  # the spelling callers use


def test_promised_signatures_hold() -> None:
    from orkas.engine.memory import KnowledgeBase, scan_memory_text
    from orkas.engine.sandbox import CommandRisk, classify_command
    from orkas.engine.tokens import estimate_tokens

    assert isinstance(classify_command("ls -la"), CommandRisk)
    assert scan_memory_text("The user likes short answers.") == []
    assert isinstance(estimate_tokens("hello world"), int)
    search = inspect.signature(KnowledgeBase.search).parameters
    assert search["k"].default == 10 and search["mode"].default == "hybrid"
    assert list(inspect.signature(KnowledgeBase.add_text).parameters)[1:3] == ["doc_id", "text"]

"""Every view shows a tool call in the one line the tool itself gives on its `tool_start` (no client keeps a
list of argument names to guess from): the argument its schema requires, or what the tool says of itself."""

from __future__ import annotations

from pathlib import Path

from orkas.engine.events import ToolStart
from orkas.engine.memory import Memory, MemoryTool
from orkas.engine.tools.base import SUMMARY_CHARS, summarize
from orkas.engine.tools.edits import EditFile, WriteFile
from orkas.engine.tools.files import GrepFiles, ReadFile
from orkas.engine.tools.web import WebFetch
from tests.engine.helpers import collect, make_agent
from tests.fakes.scripted import ScriptedProvider, text, tool_call


def test_the_required_argument_says_what_a_call_is_about(tmp_path: Path) -> None:
    assert summarize(WriteFile(), {"content": "a long body", "path": "notes/a.md"}) == "notes/a.md"
    assert summarize(EditFile(), {"old_string": "x", "new_string": "y", "path": "src/m.py"}) == "src/m.py"
    assert summarize(GrepFiles(), {"path": "src", "pattern": "TODO"}) == "TODO"
    assert summarize(WebFetch(), {"max_chars": 100, "url": "https://example.org/a"}) == "https://example.org/a"
    remembering = MemoryTool(Memory.in_folder(tmp_path))
    assert summarize(remembering, {"action": "add", "text": "Likes   tea\n"}) == "add notes: Likes tea"
    assert summarize(remembering, {"action": "list"}) == "list notes"


def test_a_summary_is_one_short_line_and_an_unknown_tool_still_gets_one() -> None:
    long = summarize(ReadFile(), {"path": "a/" * 100})
    assert len(long) == SUMMARY_CHARS and long.endswith("…") and "\n" not in long
    assert summarize(None, {"n": 3, "what": "the\nthing"}) == "the thing"
    assert summarize(None, {}) == ""


async def test_the_run_puts_it_on_tool_start(tmp_path: Path) -> None:
    (tmp_path / "todo.txt").write_text("milk\n")
    provider = ScriptedProvider(tool_call("read_file", {"path": "todo.txt"}), text("Milk."))
    events = await collect(make_agent(provider, tmp_path, tools=[ReadFile()]))
    [start] = [e for e in events if isinstance(e, ToolStart)]
    assert start.summary == "todo.txt"

"""How `orkas run` shows events: plain text for people, JSON lines for programs."""

from __future__ import annotations

import json
from typing import TextIO

from orkas.engine.events import Done, Error, Event, Retry, TextDelta, ToolEnd, ToolStart, event_dict
from orkas.engine.messages import TextBlock


def event_json(event: Event) -> str:
    return json.dumps(event_dict(event), ensure_ascii=False)


class JsonPrinter:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def show(self, event: Event) -> None:
        self.out.write(event_json(event) + "\n")
        self.out.flush()


class TextPrinter:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err
        self.mid_line = False
        self.inputs: dict[str, str] = {}

    def show(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.out.write(event.text)
            self.out.flush()
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, ToolStart):
            self.inputs[event.id] = json.dumps(dict(event.input), ensure_ascii=False)[:160]
        elif isinstance(event, ToolEnd):
            self._line(f"• {event.name} {self.inputs.pop(event.id, '')} {_brief(event)}")
        elif isinstance(event, Retry):
            self._line(f"… retrying in {event.wait:.1f}s (attempt {event.attempt}): {event.reason}")
        elif isinstance(event, Done):
            if self.mid_line:
                self.out.write("\n")
            if event.stop_reason == "max_tool_loops":
                self._line(f"(stopped: the limit of {event.tool_loops} tool rounds was reached)")
        elif isinstance(event, Error):
            if self.mid_line:
                self.out.write("\n")
            prefix = "stopped" if event.aborted else "error"
            print(f"orkas: {prefix}: {event.message}", file=self.err, flush=True)

    def _line(self, text: str) -> None:
        if self.mid_line:
            self.out.write("\n")
            self.out.flush()
            self.mid_line = False
        print(text, file=self.err, flush=True)


def _brief(event: ToolEnd) -> str:
    first = next((b.text for b in event.content if isinstance(b, TextBlock)), "")
    summary = first.strip().splitlines()[0][:120] if first.strip() else "(no text)"
    status = "error" if event.is_error else "ok"
    return f"→ {status} in {event.duration * 1000:.0f} ms: {summary}"

"""How `orkas run` shows a conversation's events: JSON lines for programs, plain text for people.

Both read the wire (adapter/wire.py's `to_wire`): the JSON printer writes each event exactly as the
window's socket carries it; the text printer streams a one-agent answer, prints a group's bubbles as
`name: text`, and says tool calls, retries and problems on stderr.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TextIO

Wire = Mapping[str, Any]
DISPATCH = "dispatch_to"  # the commander's tool for asking a member
ENVELOPE = re.compile(r"</?worker-(?:error|result)\b[^>]*>")  # how the commander is handed a member's answer
ENVELOPE_FROM = re.compile(r'<worker-(?:error|result)\b[^>]*\bfrom="([^"]*)"')


class JsonPrinter:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def show(self, event: Wire) -> None:
        self.out.write(json.dumps(event, ensure_ascii=False) + "\n")
        self.out.flush()


class TextPrinter:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err
        self.mid_line = False
        self.inputs: dict[str, str] = {}
        self.questions: dict[str, str] = {}  # an open consent question's id → the tool that asks

    def show(self, event: Wire) -> None:
        kind, actor = event["type"], event.get("actor")
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(event, f"[{actor}] " if actor and actor != "group" else "")  # the group's own: no name

    def _on_text_delta(self, event: Wire, who: str) -> None:
        if who:  # a group's text is printed as its bubble, once posted
            return
        self.out.write(event["text"])
        self.out.flush()
        self.mid_line = not event["text"].endswith("\n")

    def _on_tool_start(self, event: Wire, who: str) -> None:
        self.inputs[event["id"]] = event.get("summary", "")

    def _on_tool_end(self, event: Wire, who: str) -> None:
        if event["name"] == DISPATCH:  # said once, by its group_message; the answer is the member's bubble
            self.inputs.pop(event["id"], None)
            if event["is_error"]:
                first = next((b.get("text", "") for b in event["content"] if b.get("type") == "text"), "")
                named = ENVELOPE_FROM.search(first)
                whom = f" {named.group(1)}" if named else ""
                self._line(f"• {event.get('actor', 'commander')} could not ask{whom}: {_why(ENVELOPE.sub('', first))}")
            return
        status = "error" if event["is_error"] else "ok"
        first = next((b.get("text", "") for b in event["content"] if b.get("type") == "text"), "")
        said = _why(first) if event["is_error"] else _gist(first)
        call = " ".join(part for part in (event["name"], self.inputs.pop(event["id"], "")) if part)
        self._line(f"• {who}{call} → {status} in {event['duration'] * 1000:.0f} ms: {said}")

    def _on_instructions(self, event: Wire, who: str) -> None:
        files = event["files"]
        said = f"{files[0]}" + (f" ({len(files)} files)" if len(files) > 1 else "")
        if event["trusted"]:
            self._line(f"orkas: instructions: {said}")
        else:
            self._line(f"orkas: instructions: {said}, read as outside data: folder not trusted (orkas trust add)")

    def _on_permission_request(self, event: Wire, who: str) -> None:
        self.questions[event["id"]] = f"{who}{event['tool']}"

    def _on_permission_answered(self, event: Wire, who: str) -> None:
        tool = self.questions.pop(event["question_id"], "a tool")
        if event.get("unattended"):
            self._line(f"orkas: {tool} was not run: it needs your approval, and there is no terminal to ask on")
            self._line(
                "       (run orkas in a terminal to be asked; what you allow 'always' there is allowed here too)"
            )

    def _on_retry(self, event: Wire, who: str) -> None:
        self._line(f"… {who}retrying in {event['wait']:.1f}s (attempt {event['attempt']}): {event['reason']}")

    def _on_done(self, event: Wire, who: str) -> None:
        self._end_line()
        if event["stop_reason"] == "max_tool_loops":
            self._line(f"({who}stopped: the limit of {event['tool_loops']} tool rounds was reached)")

    def _on_error(self, event: Wire, who: str) -> None:
        self._end_line()
        prefix = "stopped" if event["kind"] == "aborted" else "error"
        print(f"orkas: {who}{prefix}: {event['message']}", file=self.err, flush=True)

    def _on_group_message(self, event: Wire, who: str) -> None:
        message = event["message"]
        if message["from"] == "user":
            return
        if message.get("dispatch") is not None:
            self._line(f"• {message['from']} asked {', '.join(message['to'])}: {_why(message['dispatch'])}")
        elif message.get("text"):
            print(f"{message['from']}: {message['text']}\n", file=self.out, flush=True)

    def _on_unknown_mentions(self, event: Wire, who: str) -> None:
        names = ", ".join(f"@{n}" for n in event["names"])
        self._line(f"orkas: nobody here is called {names}; the message went to {event['delivered_to']}")

    def _on_warning(self, event: Wire, who: str) -> None:
        self._line(f"orkas: {who}{event['message']}")

    def _on_provider_fallback(self, event: Wire, who: str) -> None:
        self._line(f"orkas: {who}{event['message']}")

    def _end_line(self) -> None:
        if self.mid_line:
            self.out.write("\n")
            self.out.flush()
            self.mid_line = False

    def _line(self, text: str) -> None:
        self._end_line()
        print(text, file=self.err, flush=True)


GIST_CHARS, WHY_CHARS = 120, 400


def _gist(text: str) -> str:
    """A result's first line: what it found, not all of it."""
    first = text.strip().splitlines()[0] if text.strip() else "(no text)"
    return first if len(first) <= GIST_CHARS else first[: GIST_CHARS - 1] + "…"


def _why(text: str) -> str:
    """An error's whole reason on one line (a reason split over lines — "invalid input for tool 'x':" then what
    was wrong — must not lose its second half), cut only when it is very long."""
    said = " ".join(text.split()) or "(no reason given)"
    return said if len(said) <= WHY_CHARS else said[: WHY_CHARS - 1] + "…"

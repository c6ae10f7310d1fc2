"""How `orkas run` answers a consent question: asked on the terminal when a person is there, else a no.

The question goes to stderr and the answer comes from stdin, so `--json`'s stdout stays one event per line.
Questions are asked one at a time, in the order they came, while the run's other events go on being printed;
a question the run closed meanwhile (a stop) finds its answer refused by the runtime. Without a terminal (a
script, a pipe, CI) every question is a no said as `unattended`, on the wire and on stderr: the window, the
phone and the script all see that the tool was not run, and why.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orkas.adapter.conversations.runtime import ConversationRuntime
    from orkas.engine.consent import Decision

TERMINAL = "orkas run"  # who answered, as the window and the phone show it
ANSWERS: dict[str, Decision] = {"o": "allow_once", "r": "allow_run", "a": "always", "d": "deny"}
WORDS = {"once", "run", "always", "deny"}  # the answers spelled out
EFFECTS = {
    "network": "if allowed, it runs in the sandbox WITH network access",
    "unconfined": "if allowed, it runs OUTSIDE the sandbox, with your files and your keys",
}


class TerminalConsent:
    def __init__(self, runtime: ConversationRuntime, conversation_id: str, *, attended: bool) -> None:
        self.runtime = runtime
        self.conversation_id = conversation_id
        self.attended = attended
        self._turn = asyncio.Lock()  # one question on the terminal at a time
        self._asking: set[asyncio.Task[None]] = set()

    def on(self, event: Mapping[str, Any]) -> None:
        """A permission request came: answer it, now (nobody there) or once the person has (in a task, so the
        run's other events keep being printed)."""
        if not self.attended:
            self.runtime.answer(self.conversation_id, event["id"], "deny", by=TERMINAL, unattended=True)
            return
        task = asyncio.create_task(self._ask(event))
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    def close(self) -> None:
        """The run is over: questions still on the terminal are left unanswered (the run already said no)."""
        for task in self._asking:
            task.cancel()

    async def _ask(self, event: Mapping[str, Any]) -> None:
        async with self._turn:
            if not self.runtime.is_open(self.conversation_id, event["id"]):
                return  # closed while an earlier question was being answered
            print(_question(event), end="", file=sys.stderr, flush=True)
            chosen = await _answer(event["options"])
        self.runtime.answer(self.conversation_id, event["id"], chosen, by=TERMINAL)


async def _answer(options: Sequence[str]) -> Decision:
    """One of the offered answers, asked again until it is one ("y" is not: it is not said what it allows); Enter
    or the end of input is a no."""
    while True:
        line = await _read_line()
        reply = line.strip().lower()
        if not line or not reply:
            return "deny"
        decision = ANSWERS.get(reply[:1]) if len(reply) == 1 or reply in WORDS else None
        if decision is not None and decision in options:
            return decision
        keys = ", ".join(key for key, d in ANSWERS.items() if d in options and d != "deny")
        print(f"  {reply!r} is not an answer here: {keys} or d (Enter)? ", end="", file=sys.stderr, flush=True)


def _question(event: Mapping[str, Any]) -> str:
    categories = ", ".join(event["categories"]) or "changes files"
    effect = f"  ({EFFECTS[event['effect']]})\n" if event.get("effect") in EFFECTS else ""
    choices = "allow [o]nce, for this [r]un, [a]lways in this workspace, or [d]eny (Enter)? "
    if "always" not in event["options"]:
        choices = "allow [o]nce or [d]eny (Enter)? "
    who = f"[{event['actor']}] " if event.get("actor") else ""
    return f"\n{who}{event['tool']} wants to run ({categories}):\n  {event['preview']}\n{effect}{choices}"


def _read_line() -> asyncio.Future[str]:
    """A line from stdin ("" at its end), read on a daemon thread: a run stopped mid-question ends the command
    without waiting for Enter (the executor's threads are joined at exit; a daemon thread is not)."""
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def deliver(text: str) -> None:
        if not line.done():
            line.set_result(text)

    def read() -> None:
        text = sys.stdin.readline()
        try:
            loop.call_soon_threadsafe(deliver, text)
        except RuntimeError:  # the command ended first
            pass

    threading.Thread(target=read, name="orkas-consent", daemon=True).start()
    return line

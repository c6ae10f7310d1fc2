"""`orkas run` asking for consent, end to end: a real subprocess, the wire fake, a real pseudo-terminal.

With a person at the terminal the question is asked on stderr and answered from stdin (so `--json`'s stdout
stays events); without one (a pipe, a script) the answer is no — and that no is on the wire and on stderr,
not a silent "approval not given" the script has to guess at.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.e2e.test_cli import ORKAS, anthropic_env
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer

QUESTION_END = b"(Enter)? "


def write_then_reply(server: FakeServer, *files: str) -> None:
    calls = [
        a_wire.tool_use("write_file", {"path": f, "content": f"{f}\n"}, id=f"toolu_{i}") for i, f in enumerate(files)
    ]
    server.script(a_wire.message(*calls), a_wire.reply_text("Done what I was allowed to."))


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]  # every line an event: nothing else on stdout


def without_a_terminal(server: FakeServer, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`orkas run` as a script runs it: stdin is not a terminal."""
    return subprocess.run(
        [ORKAS, "run", *args],
        env=anthropic_env(server),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_without_a_terminal_the_no_is_said_on_the_wire(anthropic_server: FakeServer, tmp_path: Path) -> None:
    write_then_reply(anthropic_server, "notes.txt")
    result = without_a_terminal(anthropic_server, tmp_path, "write it", "--json")
    assert result.returncode == 0, result.stderr
    events = events_of(result.stdout)
    request = next(e for e in events if e["type"] == "permission_request")
    answered = next(e for e in events if e["type"] == "permission_answered")
    assert request["tool"] == "write_file" and "notes.txt" in request["preview"]
    assert answered == {**answered, "question_id": request["id"], "decision": "deny", "unattended": True}
    assert answered["by"] == "orkas run"
    end = next(e for e in events if e["type"] == "tool_end")
    assert end["is_error"] is True and not (tmp_path / "notes.txt").exists()
    # The model is told nobody was asked: not that the person refused (it stopped offering, or argued with them).
    [result_block] = [
        b for b in anthropic_server.requests[-1].json["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    told = json.dumps(result_block["content"])
    assert told.index("Nobody was asked (orkas run had no terminal or window to ask in)") < told.index(
        "did not approve"
    )
    assert "This is not the person's refusal" in told  # framed first: the tool's words are not read as a refusal


def test_without_a_terminal_text_mode_says_why_on_stderr(anthropic_server: FakeServer, tmp_path: Path) -> None:
    write_then_reply(anthropic_server, "notes.txt")
    result = without_a_terminal(anthropic_server, tmp_path, "write it")
    assert result.returncode == 0, result.stderr
    assert "orkas: write_file was not run: it needs your approval, and there is no terminal to ask on" in result.stderr
    assert result.stdout == "Done what I was allowed to.\n" and not (tmp_path / "notes.txt").exists()


class Terminal:
    """`orkas run` with a pseudo-terminal for stdin: what it asks is read from stderr, answered by typing."""

    def __init__(self, server: FakeServer, cwd: Path, *args: str, **env: str) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [ORKAS, "run", *args],
            env={**anthropic_env(server), **env},
            cwd=cwd,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        os.close(slave)
        self.said = b""

    def question(self, timeout: float = 30) -> bytes:
        """Everything on stderr up to the next question's end (a deadline, not a timing claim)."""
        assert self.proc.stderr is not None
        deadline = time.monotonic() + timeout
        start = len(self.said)
        while QUESTION_END not in self.said[start:]:
            ready, _, _ = select.select([self.proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no question after {timeout}s: {self.said.decode()!r}"
            chunk = os.read(self.proc.stderr.fileno(), 4096)
            assert chunk, f"stderr closed before a question: {self.said.decode()!r}"
            self.said += chunk
        return self.said[start:]

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def finish(self) -> tuple[str, str]:
        out, err = self.proc.communicate(timeout=30)
        os.close(self.master)
        return out.decode(), (self.said + err).decode()

    def __del__(self) -> None:  # a test that failed mid-question leaves no `orkas run` waiting for an answer
        if self.proc.poll() is None:
            self.proc.kill()


def test_at_a_terminal_json_mode_asks_on_stderr_and_keeps_stdout_events(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    write_then_reply(anthropic_server, "notes.txt")
    terminal = Terminal(anthropic_server, tmp_path, "write it", "--json")
    asked = terminal.question()
    assert b"write_file wants to run" in asked and b"notes.txt" in asked
    terminal.type("o")
    out, _ = terminal.finish()
    events = events_of(out)
    assert terminal.proc.returncode == 0
    answered = next(e for e in events if e["type"] == "permission_answered")
    assert answered["decision"] == "allow_once" and answered["by"] == "orkas run" and not answered["unattended"]
    assert (tmp_path / "notes.txt").read_text() == "notes.txt\n"


def test_two_questions_are_asked_one_at_a_time_in_order(anthropic_server: FakeServer, tmp_path: Path) -> None:
    write_then_reply(anthropic_server, "first.txt", "second.txt")
    terminal = Terminal(anthropic_server, tmp_path, "write both", "--json")
    first = terminal.question()
    assert b"first.txt" in first and b"second.txt" not in first
    terminal.type("o")
    assert b"second.txt" in terminal.question()
    terminal.type("d")
    out, _ = terminal.finish()
    events = events_of(out)
    decisions = [e["decision"] for e in events if e["type"] == "permission_answered"]
    assert decisions == ["allow_once", "deny"]
    assert (tmp_path / "first.txt").exists() and not (tmp_path / "second.txt").exists()
    assert "without asking anyone" not in json.dumps(anthropic_server.requests[-1].json)  # this no was the person's


def test_an_answer_that_is_not_one_is_asked_again_not_taken_for_no(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    write_then_reply(anthropic_server, "notes.txt")
    terminal = Terminal(anthropic_server, tmp_path, "write it", "--json")
    terminal.question()
    terminal.type("y")  # the most common terminal answer, and not one of these
    assert b"'y' is not an answer here: o, r, a or d (Enter)? " in terminal.question()
    terminal.type("once")
    out, _ = terminal.finish()
    answered = next(e for e in events_of(out) if e["type"] == "permission_answered")
    assert answered["decision"] == "allow_once" and (tmp_path / "notes.txt").exists()


def test_ctrl_c_during_a_question_ends_the_command_without_an_answer(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    anthropic_server.script(a_wire.message(a_wire.tool_use("write_file", {"path": "notes.txt", "content": "x"})))
    terminal = Terminal(anthropic_server, tmp_path, "write it", "--json")
    terminal.question()
    terminal.proc.send_signal(signal.SIGINT)  # nobody types: the command must not wait for Enter
    out, _ = terminal.finish()
    events = events_of(out)
    assert terminal.proc.returncode == 130
    assert events[-1]["type"] == "idle" and not (tmp_path / "notes.txt").exists()
    # The question is closed on the wire, said as stopped (a view kept it open), before the run's end.
    request = next(e for e in events if e["type"] == "permission_request")
    kinds = [e["type"] for e in events]
    answered = events[kinds.index("permission_answered")]
    assert answered["question_id"] == request["id"] and answered["decision"] == "deny" and answered["stopped"]
    assert kinds.index("permission_answered") < kinds.index("error")


def test_text_mode_at_a_terminal_still_asks(anthropic_server: FakeServer, tmp_path: Path) -> None:
    write_then_reply(anthropic_server, "notes.txt")
    terminal = Terminal(anthropic_server, tmp_path, "write it")
    terminal.question()
    terminal.type("d")
    out, err = terminal.finish()
    assert terminal.proc.returncode == 0 and "was not run" not in err  # a person's no is not "nobody to ask"
    assert out == "Done what I was allowed to.\n" and not (tmp_path / "notes.txt").exists()

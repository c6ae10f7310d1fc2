"""Kill `orkas run` at random moments and check what survives. Shared by the test suite and
bench/crash_trials.py (which runs many more trials)."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orkas.adapter.conversations.sessions import PersistentSession, load, parse
from orkas.adapter.conversations.transcript import LoadReport
from orkas.engine.events import Done
from orkas.engine.providers.base import ProviderSpec
from orkas.engine.providers.openai_compat import OpenAICompatProvider
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.tools.files import ListFiles, ReadFile
from tests.fakes import openai as wire
from tests.fakes.server import FakeServer, Recorded, Reply
from tests.validators import anthropic_violations, request_violations

ORKAS = str(Path(sys.executable).parent / "orkas")
TOOL_ROUNDS = 2


def respond(request: Recorded) -> Reply:
    """Two rounds of two parallel reads, then a slowly streamed answer: kills land everywhere."""
    messages = request.json["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    rounds = sum(1 for m in messages[last_user:] if m["role"] == "assistant" and m.get("tool_calls"))
    if rounds < TOOL_ROUNDS:
        n = len(messages)
        calls = [
            (f"call_{n}_a", "read_file", {"path": "a.txt"}),
            (f"call_{n}_b", "read_file", {"path": "b.txt"}),
        ]
        return Reply(events=wire.tool_events(calls), event_delay=0.002)
    words = [f"word{i} " for i in range(30)]
    frames = [wire.chunk({"role": "assistant", "content": ""})]
    frames += [wire.chunk({"content": w}) for w in words]
    frames += [wire.chunk({}, "stop"), wire.usage_chunk(), wire.DONE]
    return Reply(events=frames, event_delay=0.004)


@dataclass
class Outcome:
    trial: int
    killed_after: float
    session_id: str | None
    truncated_at: int | None = None
    records: int = 0
    lost_bytes: int = 0
    synthesized: int = 0  # interrupted tool calls answered by the repair
    torn_checked: int = 0  # copies of the file cut at other random offsets, each loaded and checked
    problems: list[str] = field(default_factory=list)


class CrashLab:
    """A workspace, a data dir and a fake server shared by the trials."""

    def __init__(self, root: Path, server: FakeServer, env: dict[str, str], *, torn_copies: int = 0) -> None:
        """`torn_copies`: after each kill, also load that many copies of the transcript cut at random offsets
        (in-process and cheap: many more tears checked than kills made)."""
        self.root = root
        self.torn_copies = torn_copies
        self.server = server
        self.workspace = root / "ws"
        self.workspace.mkdir(exist_ok=True)
        (self.workspace / "a.txt").write_text("alpha\n" * 50)
        (self.workspace / "b.txt").write_text("bravo\n" * 50)
        self.env = {**env, "ORKAS_HOME": str(root / "home"), "OPENAI_BASE_URL": server.url + "/v1"}
        self.store = Transcripts(root / "home" / "conversations")
        self.sessions: list[str] = []

    def measure_run(self) -> tuple[float, float]:
        """(seconds until the run announced its session, seconds for the whole run) of one clean run."""
        started = time.monotonic()
        args = [ORKAS, "run", "warm-up", "--json", "--model", "openai/fake", "--workspace", str(self.workspace)]
        proc = subprocess.Popen(args, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None
        proc.stdout.readline()
        ready = time.monotonic() - started
        proc.communicate(timeout=60)
        return ready, time.monotonic() - started

    def trial(self, number: int, rng: random.Random, *, delay: float, after_ready: bool = False) -> Outcome:
        """One run killed `delay` seconds after it started, or (`after_ready`) after it announced its session:
        then the kill lands inside the run however long this start-up took on a busy machine."""
        args = [
            ORKAS,
            "run",
            f"task {number}: read a.txt and b.txt",
            "--json",
            "--model",
            "openai/fake",
            "--workspace",
            str(self.workspace),
        ]
        if self.sessions and rng.random() < 0.5:
            args += ["--session", rng.choice(self.sessions)]
        before = self.store.ids()
        proc = subprocess.Popen(args, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        announced = b""
        if after_ready:
            assert proc.stdout is not None
            announced = proc.stdout.readline()  # the run_start line: the session is on disk
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        out, _err = proc.communicate(timeout=30)
        out = announced + out
        session_id = _session_from(out) or _new_session(self.store, before) or _continued(args)
        outcome = Outcome(trial=number, killed_after=delay, session_id=session_id)
        if session_id is None or not self.store.path(session_id).exists():
            return outcome  # killed before anything was written: nothing to check
        if session_id not in self.sessions:
            self.sessions.append(session_id)
        path = self.store.path(session_id)
        for torn in range(self.torn_copies):  # other tears of the same file, each loaded from a copy
            self._check_torn_copy(path, rng, outcome, torn)
        if rng.random() < 0.3:
            size = path.stat().st_size
            outcome.truncated_at = rng.randrange(0, size + 1) if size else 0
            with path.open("r+b") as f:
                f.truncate(outcome.truncated_at)
        self._check(path, outcome)
        return outcome

    def _check_torn_copy(self, path: Path, rng: random.Random, outcome: Outcome, number: int) -> None:
        """A copy of the transcript cut at a random offset loads as the file itself must (the same checks);
        a copy, so that the next trials continue the uncut file."""
        data = path.read_bytes()
        cut = rng.randrange(0, len(data) + 1) if data else 0
        copy = self.root / "torn" / f"{path.parent.name}-{outcome.trial}-{number}" / path.name
        copy.parent.mkdir(parents=True)
        copy.write_bytes(data[:cut])
        checked = Outcome(trial=outcome.trial, killed_after=outcome.killed_after, session_id=outcome.session_id)
        self._check(copy, checked)
        outcome.problems += [f"a copy cut at byte {cut} of {len(data)}: {p}" for p in checked.problems]
        outcome.torn_checked += 1

    def _check(self, path: Path, outcome: Outcome) -> None:
        raw = path.read_bytes()
        complete = raw.count(b"\n")
        _messages, parsed, _skipped = parse(raw)
        if parsed.corrupt_lines:
            outcome.problems.append(f"corrupt lines besides the last: {parsed.corrupt_lines}")
        outcome.lost_bytes = parsed.torn_tail_bytes
        try:
            session, report = load(path)
        except Exception as e:  # the point of the test: loading must never fail
            outcome.problems.append(f"load failed: {type(e).__name__}: {e}")
            return
        outcome.records = report.records
        outcome.synthesized = len(report.repair.synthesized)
        if report.records != complete:
            outcome.problems.append(f"{complete} complete lines on disk but {report.records} records loaded")
        if violations := anthropic_violations(list(session.messages())):
            outcome.problems.append(f"pairing violations after load: {violations}")
        session.close()

    async def next_run_succeeds(self, session_id: str) -> list[str]:
        """Continue a crashed session in-process against the same fake server."""
        session, _ = self.store.open(session_id)
        provider = OpenAICompatProvider(
            ProviderSpec(name="openai", api="openai-chat", base_url=self.server.url + "/v1")
        )
        agent = Agent(
            providers=ProviderRegistry({"openai": provider}),
            config=RunConfig(model="openai/fake"),
            workspace=self.workspace,
            tools=[ReadFile(), ListFiles()],
        )
        first_request = len(self.server.requests)
        try:
            result = await agent.run_to_end("continue", session=session)
        finally:
            session.close()
            await provider.aclose()
        problems = [] if isinstance(result.done, Done) else [f"the next run failed: {result.error}"]
        for request in self.server.requests[first_request:]:
            sent = _openai_to_anthropic_shape(request.json["messages"])
            problems += [f"request after crash: {v}" for v in request_violations(sent)]
        problems += [f"after next run: {v}" for v in anthropic_violations(list(session.messages()))]
        return problems


def _session_from(out: bytes) -> str | None:
    first = out.split(b"\n", 1)[0]
    try:
        return str(json.loads(first)["conversation"])
    except (ValueError, KeyError):
        return None


def _new_session(store: Transcripts, before: set[str]) -> str | None:
    created = store.ids() - before
    return next(iter(created)) if created else None


class Transcripts:
    """Where `orkas run` keeps each conversation's transcript: `<data>/conversations/<id>/messages.jsonl`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def ids(self) -> set[str]:
        return {p.parent.name for p in self.root.glob("*/messages.jsonl")} if self.root.exists() else set()

    def path(self, session_id: str) -> Path:
        return self.root / session_id / "messages.jsonl"

    def open(self, session_id: str) -> tuple[PersistentSession, LoadReport]:
        return load(self.path(session_id))


def _continued(args: list[str]) -> str | None:
    return args[args.index("--session") + 1] if "--session" in args else None


def _openai_to_anthropic_shape(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Re-express an OpenAI chat request in Anthropic terms, so one validator checks both wires."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "system":
            continue
        if m["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"]}
            if out and out[-1]["role"] == "user" and all(b["type"] == "tool_result" for b in out[-1]["content"]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
            continue
        content = m.get("content")
        blocks: list[dict[str, Any]] = []
        if isinstance(content, str) and content:
            blocks.append({"type": "text", "text": content})
        elif isinstance(content, list):
            blocks += [{"type": "text", "text": p.get("text", "x")} for p in content]
        for call in m.get("tool_calls") or ():
            blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": {}})
        out.append({"role": m["role"], "content": blocks})
    return out


def run_trials(lab: CrashLab, trials: int, seed: int, *, stratified: bool = False) -> list[Outcome]:
    """Kill at a random moment of a run, timed against one undisturbed run measured here: one kill in
    ten during start-up, the rest uniformly between the session's first write and the run's end, so
    the kills land on streaming and tools on any machine, however slow its start-up.

    `stratified`: the same two spans cut into equal slots, one kill at a random moment of each slot, in a
    random order — a few trials then cover the whole run as evenly as many independent ones would. The
    kills after start-up are timed from each run's own announcement of its session (not from its start),
    so they land inside the run even when a busy machine makes one start-up slower than the measured one."""
    rng = random.Random(seed)
    ready, total = lab.measure_run()
    end = total * 1.1
    if not stratified:
        outcomes = []
        for i in range(trials):
            low, high = (0.0, ready) if rng.random() < 0.1 else (ready, end)
            outcomes.append(lab.trial(i, rng, delay=rng.uniform(low, high)))
        return outcomes
    early = max(1, round(trials / 10))
    late = trials - early
    slots = [(False, ready * k / early, ready * (k + 1) / early) for k in range(early)]
    slots += [(True, (end - ready) * k / late, (end - ready) * (k + 1) / late) for k in range(late)]
    rng.shuffle(slots)
    return [
        lab.trial(i, rng, delay=rng.uniform(low, high), after_ready=after) for i, (after, low, high) in enumerate(slots)
    ]


def check_next_runs(lab: CrashLab) -> list[str]:
    problems: list[str] = []
    for session_id in lab.sessions:
        problems += asyncio.run(lab.next_run_succeeds(session_id))
    return problems

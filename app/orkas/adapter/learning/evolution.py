"""Self-evolution in the product: which agents reflect when, what they read, where what they learn is kept.

    <data>/learned/state.json              per agent: when it last reflected
    <data>/learned/<agent>/skills/          its learned skills (the skills' `learned` tier)
    <data>/learned/<agent>/memo/            COMPETENCE.md, STRATEGIES.md (pinned into its prompt)
    <data>/learned/<agent>/history.jsonl    every change, with the text before and after: the Learning
                                            screen shows it and undoes it
    <data>/learned/<agent>/proposals/<id>.json
                                            changes held for the person: Settings → Learning accepts or
                                            rejects each proposal

A cycle looks at every named agent — never the commander: the person's default conversation with Orkas does
not evolve, only a conversation bound to a named agent, or a group member's runs, teach that agent. It
reflects only when the agent is dirty (runs recorded since its last reflection) and the trigger fires on those
runs — or it is forced: 7 days without a reflection and something new. Scheduled cycles also keep a 4 h
cooldown per agent and take at most 5 agents, stalest first. A failure leaves that agent's timestamp where it
was and never touches another agent. A cycle spends at most `CYCLE_TOKENS`; each reflection call's output is
capped low.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from orkas.adapter.learning.proposals import Proposals, full_guard, last_of_each, rule_guard
from orkas.adapter.learning.signals import SignalLog
from orkas.core.fsutil import atomic_write
from orkas.engine.evolution import bundle
from orkas.engine.evolution.memo import Memo, MemoChange
from orkas.engine.evolution.metrics import WINDOW, skill_metrics
from orkas.engine.evolution.prompt import NOTHING, reflection_request
from orkas.engine.evolution.store import Change, LearnedSkills
from orkas.engine.evolution.tools import MemoWrite, Similar, SkillManage
from orkas.engine.evolution.trigger import THRESHOLD, Trigger, Weakness, score_runs
from orkas.engine.tools.base import Tool

log = logging.getLogger(__name__)

COMMANDER = "commander"
COOLDOWN = 4 * 3600
INTERVAL = 12 * 3600
FORCED = 7 * 86_400
FIRST_LOOKBACK = 48 * 3600  # an agent that never reflected: how far back its runs count
MAX_AGENTS = 5
CYCLE_TOKENS = 120_000  # all reflection calls of one cycle together
OUTPUT_TOKENS = 2_000  # one reflection call's answer

# (agent, system prompt, user message, tools) → (the model's final text, tokens used). Raises on failure.
Reflect = Callable[[str, str, str, Sequence[Tool]], Awaitable[tuple[str, int]]]
# (agent, conversation ids) → those conversations as the bundle wants them
Transcripts = Callable[[str, Sequence[str]], Sequence[bundle.Conversation]]
# agent → how to find its learned skills much like a new one (the knowledge base's search)
SimilarLookup = Callable[[str], Similar]


@dataclass(slots=True)
class Outcome:
    agent: str
    reflected: bool
    why: str  # one line: skipped because …, or what triggered it
    changes: list[str] = field(default_factory=list)
    error: str | None = None
    tokens: int = 0


class Evolution:
    def __init__(
        self,
        data: Path,
        signals: SignalLog,
        transcripts: Transcripts,
        reflect: Reflect,
        agents: Callable[[], Sequence[str]],
        *,
        clock: Callable[[], float] = time.time,
        guard: Callable[[str], str | None] = rule_guard,
        hold: Callable[[str], str | None] = full_guard,
        similar: SimilarLookup | None = None,
        threshold: float | Callable[[], float] = THRESHOLD,
    ) -> None:
        self.folder = data / "learned"
        self.signals = signals
        self.transcripts = transcripts
        self.reflect = reflect
        self.agents = agents
        self.clock = clock
        self.guard = guard
        self.hold = hold
        self.similar = similar
        self._threshold = threshold  # or how to read it (Settings → Learning changes it while the app runs)
        self.held = Proposals(self.folder, clock)  # what a reflection may not do alone, held for the person

    @property
    def threshold(self) -> float:
        return self._threshold() if callable(self._threshold) else self._threshold

    # ---- where things are ----
    def skills(self, agent: str, conversations: Sequence[str] = (), made: list[str] | None = None) -> LearnedSkills:
        def changed(change: Change) -> None:
            self._remember(agent, "skill", change.name, change.action, change, conversations)
            if made is not None:
                made.append(f"{change.action} skill {change.name}")

        def health() -> dict[str, str]:
            root = self.folder / agent / "skills"
            names = [p.name for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
            runs = self.signals.since(self.clock() - WINDOW, agent)
            return {name: metric.health for name, metric in skill_metrics(names, runs).items()}

        return LearnedSkills(self.folder / agent / "skills", check=self.guard, on_change=changed, health=health)

    def memo(self, agent: str, conversations: Sequence[str] = (), made: list[str] | None = None) -> Memo:
        def changed(change: MemoChange) -> None:
            self._remember(agent, "memo", change.part, "write", change, conversations)
            if made is not None:
                made.append(f"memo {change.part}")

        return Memo(self.folder / agent / "memo", check=self.guard, on_change=changed)

    # ---- the state ----
    def _state(self) -> dict[str, dict[str, Any]]:
        try:
            raw = json.loads((self.folder / "state.json").read_text())
            return raw if isinstance(raw, dict) else {}
        except (OSError, ValueError):
            return {}

    def _set_last(self, agent: str, when: float) -> None:
        state = self._state()
        state.setdefault(agent, {})["last"] = when
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self.folder / "state.json", (json.dumps(state, indent=2) + "\n").encode())

    def last(self, agent: str) -> float | None:
        value = self._state().get(agent, {}).get("last")
        return float(value) if isinstance(value, int | float) else None

    # ---- history and undo ----
    def _remember(
        self, agent: str, kind: str, name: str, action: str, change: Change | MemoChange, conversations: Sequence[str]
    ) -> None:
        entry = {
            "id": uuid.uuid4().hex[:12],
            "at": self.clock(),
            "kind": kind,
            "name": name,
            "action": action,
            "before": change.before,
            "after": change.after,
            "conversations": list(conversations),
        }
        path = self.folder / agent / "history.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def history(self, agent: str) -> list[dict[str, Any]]:
        try:
            lines = (self.folder / agent / "history.jsonl").read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        entries = []
        for line in lines:
            try:
                entries.append(json.loads(line))
            except ValueError:
                continue  # a torn last line
        return entries

    def undo(self, agent: str, entry_id: str) -> dict[str, Any]:
        """Put back what that change replaced (itself recorded, so an undo can be undone)."""
        entry = next((e for e in self.history(agent) if e["id"] == entry_id), None)
        if entry is None:
            raise KeyError(entry_id)
        if entry["kind"] == "memo":
            self.memo(agent).write(entry["name"], entry["before"] or "")
        else:
            self.skills(agent).restore(entry["name"], entry["before"])
        return entry

    # ---- deciding ----
    def weaknesses(self, agent: str) -> list[Weakness]:
        tools = ("read_file", "write_file", "edit_file", "bash", "web_fetch", "web_search", "grep_files", "kb_search")
        found = []
        for line in self.memo(agent).weakness_lines():
            named = tuple(t for t in tools if t in line or t.replace("_", " ") in line.lower())
            if named:
                found.append(Weakness(line, named))
        return found

    def assess(self, agent: str) -> tuple[bool, Trigger, bool, list[str]]:
        """(dirty, the trigger over its new runs, forced, the conversations of those runs)."""
        now = self.clock()
        last = self.last(agent)
        runs = self.signals.since(last if last is not None else now - FIRST_LOOKBACK, agent)
        runs = [r for r in runs if last is None or r.at > last]
        conversations = list(dict.fromkeys(r.conversation for r in reversed(runs)))
        trigger = score_runs(runs, self.weaknesses(agent), self.threshold)
        forced = bool(runs) and last is not None and now - last >= FORCED  # a week without looking back
        return bool(runs), trigger, forced, conversations

    def status(self, only: str | None = None) -> list[dict[str, Any]]:
        rows = []
        for agent in self._all(only):
            dirty, trigger, forced, _ = self.assess(agent)
            skills = self.skills(agent)
            runs = self.signals.since(self.clock() - WINDOW, agent)
            metrics = skill_metrics(skills.names(), runs)
            trend = self.trend(agent, skills.names())
            rows.append(
                {
                    "agent": agent,
                    "last_reflection": self.last(agent),
                    "dirty": dirty,
                    "trigger": {"score": trigger.score, "fires": trigger.fires, "why": list(trigger.reasons)},
                    "forced": forced,
                    "learned_skills": [{**metrics[n].as_json(), "trend": trend[n]} for n in skills.names()],
                    "memo": {
                        "competence": self.memo(agent).read("competence"),
                        "strategies": self.memo(agent).read("strategies"),
                    },
                }
            )
        return rows

    def trend(self, agent: str, names: Sequence[str], days: int = 14) -> dict[str, list[dict[str, Any]]]:
        """Each learned skill's rates day by day (each day over the 7 days up to it): the Learning screen's lines."""
        now = self.clock()
        runs = self.signals.since(now - (days - 1) * 86_400 - WINDOW, agent)
        series: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for back in range(days - 1, -1, -1):
            end = now - back * 86_400
            window = [r for r in runs if end - WINDOW <= r.at <= end]
            for name, metric in skill_metrics(names, window).items():
                series[name].append(
                    {
                        "day": time.strftime("%Y-%m-%d", time.localtime(end)),
                        "invocation_rate": round(metric.invocation_rate, 3),
                        "edit_after_rate": round(metric.edit_after_rate, 3),
                        "ineffective_rate": round(metric.ineffective_rate, 3),
                    }
                )
        return series

    def _all(self, only: str | None = None) -> list[str]:
        named = [a for a in dict.fromkeys(self.agents()) if a != COMMANDER]
        return [a for a in named if a == only] if only is not None else named

    # ---- a cycle ----
    async def cycle(self, *, agent: str | None = None, scheduled: bool = True, force: bool = False) -> list[Outcome]:
        """Reflect where it is due. `scheduled` keeps the cooldown and the cap of agents (the app's 12-hour
        cycle); `orkas evolve run` passes False. `force` skips the trigger (never the dirty check)."""
        now = self.clock()
        outcomes: list[Outcome] = []
        due: list[tuple[float, str, Trigger, bool, list[str]]] = []
        for name in self._all(agent):
            dirty, trigger, forced, conversations = self.assess(name)
            last = self.last(name)
            if not dirty:
                outcomes.append(Outcome(name, False, "nothing new since its last reflection"))
            elif scheduled and last is not None and now - last < COOLDOWN:
                outcomes.append(Outcome(name, False, "reflected less than 4 h ago"))
            elif not (trigger.fires or forced or force):
                outcomes.append(Outcome(name, False, f"trigger {trigger.score:.2f} below {trigger.threshold}"))
            else:
                due.append((last or 0.0, name, trigger, forced, conversations))
        due.sort()  # stalest first
        spent = 0
        for index, (_last, name, trigger, forced, conversations) in enumerate(due):
            if scheduled and index >= MAX_AGENTS:
                outcomes.append(Outcome(name, False, "deferred to the next cycle (5 agents per cycle)"))
                continue
            if spent >= CYCLE_TOKENS:
                outcomes.append(Outcome(name, False, "deferred: this cycle's token budget is spent"))
                continue
            why = list(trigger.reasons) or (["7 days without reflection"] if forced else ["asked to"])
            outcome = await self._reflect(name, why, conversations)
            spent += outcome.tokens
            outcomes.append(outcome)
        return outcomes

    async def _reflect(self, agent: str, why: list[str], conversations: list[str]) -> Outcome:
        began = self.clock()
        staging = self.folder / agent / "staging"
        shutil.rmtree(staging, ignore_errors=True)
        for part in ("skills", "memo"):  # the reflection works on a copy: nothing it writes is live yet
            if (self.folder / agent / part).is_dir():
                shutil.copytree(self.folder / agent / part, staging / part)
        changes: list[tuple[str, Change | MemoChange]] = []
        skills = LearnedSkills(staging / "skills", check=self.guard, on_change=lambda c: changes.append(("skill", c)))
        memo = Memo(staging / "memo", check=self.guard, on_change=lambda c: changes.append(("memo", c)))
        similar: Similar = self.similar(agent) if self.similar is not None else (lambda _text: ())
        tools: list[Tool] = [SkillManage(skills, similar), MemoWrite(memo)]
        try:
            chats = self.transcripts(agent, conversations[: bundle.MAX_CONVERSATIONS])
            transcript = bundle.build(chats)
            outside = bundle.outside(chats)
            health = self.skills(agent).health()
            learned = [f"{name} ({health.get(name, 'insufficient_data').replace('_', ' ')})" for name in skills.names()]
            system, user = reflection_request(
                agent, transcript, memo.read("competence"), memo.read("strategies"), learned, why
            )
            answer, tokens = await self.reflect(agent, system, user, tools)
        except Exception as e:  # this agent's failure only: its timestamp stays, the others go on
            log.warning("reflection of %s failed: %s", agent, e)
            return Outcome(agent, False, "; ".join(why), error=str(e) or type(e).__name__)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        self._set_last(agent, began)
        made = self._keep(agent, changes, outside, conversations, "; ".join(why))
        said = NOTHING if NOTHING in answer.lower() and not made else "; ".join(made) or "no change"
        log.info("%s reflected (%s): %s", agent, "; ".join(why), said)
        return Outcome(agent, True, "; ".join(why), made, tokens=tokens)

    def _keep(
        self,
        agent: str,
        changes: Sequence[tuple[str, Change | MemoChange]],
        outside: Sequence[str],
        conversations: Sequence[str],
        why: str,
    ) -> list[str]:
        """Apply what may be kept at once, hold the rest as one proposal; returns what was done, in words."""
        made: list[str] = []
        held: list[dict[str, Any]] = []
        for kind, change in last_of_each(changes):
            name = change.name if isinstance(change, Change) else change.part
            finding = None if change.after is None else (self.hold(change.after) if not outside else None)
            if change.after is not None and (outside or finding):
                reason = f"it read outside text ({', '.join(outside[:3])})" if outside else finding
                held.append({"kind": kind, "name": name, "before": change.before, "after": change.after, "why": reason})
                made.append(f"proposed {kind} {name}")
                continue
            self._apply(agent, kind, name, change.after, conversations)
            made.append(f"{'removed' if change.after is None else 'kept'} {kind} {name}")
        if held:
            self._propose(agent, held, outside, conversations, why)
        return made

    def _apply(self, agent: str, kind: str, name: str, after: str | None, conversations: Sequence[str]) -> None:
        if kind == "memo":
            self.memo(agent, conversations).write(name, after or "")  # type: ignore[arg-type]
        else:
            skills = self.skills(agent, conversations)
            action = "delete" if after is None else ("patch" if skills.text(name) is not None else "create")
            skills.restore(name, after, action)

    # ---- proposals (proposals.py): what a reflection wanted, held for the person ----
    def _propose(
        self, agent: str, changes: list[dict[str, Any]], outside: Sequence[str], conversations: Sequence[str], why: str
    ) -> None:
        self.held.propose(agent, changes, outside, conversations, why)

    def proposals(self, agent: str | None = None) -> list[dict[str, Any]]:
        """Changes held for the person, newest first (every agent's, or one's)."""
        return self.held.listed([agent] if agent is not None else self._all())

    def decide(self, agent: str, proposal_id: str, accept: bool) -> dict[str, Any]:
        """Accept (each change applied, recorded with undo like any other) or reject a proposal. Raises KeyError
        for one that is not there; the store's refusal (a guard rule) as it is."""
        return self.held.decide(agent, proposal_id, accept, self._apply)


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    return asdict(outcome)

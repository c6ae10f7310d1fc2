"""User consent for risky operations: modes, rules, and the question itself.

A tool asks `await ctx.ask(Ask(...))`. `Permissions` answers at once when the mode, a grant for
this run, or an "always allow" rule already decides; otherwise the run emits a `permission_request`
event and waits for the person: allow once, allow for this run, always allow (a rule scoped to the
workspace that they can see and remove later), or deny. With no one to answer, the answer is deny.
Logs keep the tool, the categories and the preview's length, never the command text.

Modes: "ask" (default: only known reads run without asking), "auto" (anything that stays inside the
sandbox runs without asking — workspace changes and programs, confined; only what would leave it asks:
network, places outside the workspace, privilege, the person's keys, wholesale destruction), "plan"
(only known reads run; every change is refused). Where commands cannot be confined the shell tool
says so by raising its asks to "dangerous", so even `auto` asks before anything that is not a read.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

Mode = Literal["ask", "auto", "plan"]
Decision = Literal["allow_once", "allow_run", "always", "deny"]
# "proposal": something the person accepts or not whatever the mode (a schedule the model proposes): always asked,
# never remembered, refused in plan mode.
Level = Literal["read_only", "memory_write", "workspace_write", "runs_program", "dangerous", "proposal"]
Effect = Literal["", "network", "unconfined"]  # what approving grants beyond the sandbox
PREVIEW_CHARS = 800
_ids = itertools.count(1)
# Each process's own prefix: a conversation's event log numbers questions from the window and from `orkas run`
# alike, and two "perm-1" there made a view take the second for the first (already answered) one.
_PROCESS = secrets.token_hex(3)


@dataclass(frozen=True, slots=True, kw_only=True)
class Ask:
    """What a tool wants to do. `key` names it for grants and rules (e.g. "bash:make test", the parsed
    shape of the command); None when nothing stable can be remembered, so it can only be allowed once.
    `effect` says what approval grants: the network for this command, or running outside the sandbox."""

    tool: str
    level: Level
    categories: tuple[str, ...]
    preview: str
    key: str | None
    effect: Effect = ""
    expires_after: float | None = None  # seconds: unanswered by then is a no (a proposal must not wait for ever)
    choices: tuple[Decision, ...] | None = None  # the caller keeps its own "always" (an external agent's connector)

    @property
    def options(self) -> tuple[Decision, ...]:
        if self.choices is not None:
            return self.choices
        return ("allow_once", "allow_run", "always", "deny") if self.key else ("allow_once", "deny")


@dataclass(frozen=True, slots=True, kw_only=True)
class AllowRule:
    """ "Always allow `key` in `workspace`": visible in settings, removable."""

    workspace: str
    key: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    id: str
    ask: Ask


@dataclass
class Permissions:
    workspace: Path
    mode: Mode = "ask"
    rules: list[AllowRule] = field(default_factory=list)
    can_ask: bool = False  # is anyone there to answer?
    on_rule_added: Callable[[AllowRule], None] | None = None  # the product persists rules
    on_expired: Callable[[str], None] | None = None  # a question went unanswered past its time: the product says so
    _run_grants: set[str] = field(default_factory=set)
    _pending: dict[str, asyncio.Future[Decision]] = field(default_factory=dict)
    _why: dict[str, str] = field(default_factory=dict)  # a no that is not the person's: why nobody answered
    _waited: dict[str, float] = field(default_factory=dict)  # seconds each question waited for its answer

    def immediate(self, ask: Ask) -> bool | None:
        """True/False when no question is needed, None when the person must be asked."""
        decided = self._decide(ask)
        if decided is not None and ask.level != "read_only":  # reads are the bulk and decide nothing
            log.info(
                "permission %s without asking (%s mode): tool=%s level=%s categories=%s",
                "allowed" if decided else "refused",
                self.mode,
                ask.tool,
                ask.level,
                ask.categories,
            )
        return decided

    def _decide(self, ask: Ask) -> bool | None:
        if ask.level == "read_only":
            return True
        if ask.level == "memory_write":  # an ordinary memory write: refused in plan mode, silent otherwise
            return self.mode != "plan"
        if self.mode == "plan":
            return False
        if self.mode == "auto" and ask.level in ("workspace_write", "runs_program"):
            return True
        if ask.key is not None and (ask.key in self._run_grants or self.rule_for(ask.key) is not None):
            return True
        if not self.can_ask:
            return False
        return None

    def rule_for(self, key: str) -> AllowRule | None:
        return next((r for r in self.rules if r.key == key and r.workspace == str(self.workspace)), None)

    def remove_rule(self, rule: AllowRule) -> None:
        self.rules = [r for r in self.rules if r != rule]

    def question(self, ask: Ask) -> Question:
        question = Question(id=f"perm-{_PROCESS}-{next(_ids)}", ask=ask)
        self._pending[question.id] = asyncio.get_running_loop().create_future()
        log.info("permission asked: tool=%s categories=%s preview_chars=%d", ask.tool, ask.categories, len(ask.preview))
        return question

    async def wait(self, question: Question) -> bool:
        return await self.decision(question) != "deny"

    async def decision(self, question: Question) -> Decision:
        """The person's answer itself (`wait` says only yes or no)."""
        future = self._pending[question.id]
        asked = time.monotonic()
        try:
            if question.ask.expires_after is None:
                decision = await future
            else:
                decision = await asyncio.wait_for(asyncio.shield(future), question.ask.expires_after)
        except TimeoutError:
            decision = "deny"
            if not future.done():
                future.set_result("deny")  # a late answer finds it closed
            log.info("permission expired unanswered: tool=%s", question.ask.tool)
            if self.on_expired is not None:
                self.on_expired(question.id)
        finally:
            self._pending.pop(question.id, None)
            self._waited[question.id] = time.monotonic() - asked
        if question.ask.choices is not None and decision not in question.ask.choices:
            decision = "deny"  # an answer the question did not offer
        if decision in ("allow_run", "always") and question.ask.key is None and question.ask.choices is None:
            decision = "allow_once"  # nothing stable to remember: the answer covers this call only
        if decision == "allow_run" and question.ask.key is not None:
            self._run_grants.add(question.ask.key)
        elif decision == "always" and question.ask.key is not None:
            rule = AllowRule(workspace=str(self.workspace), key=question.ask.key)
            self.rules.append(rule)
            if self.on_rule_added is not None:
                self.on_rule_added(rule)
        log.info("permission %s: tool=%s categories=%s", decision, question.ask.tool, question.ask.categories)
        return decision

    def answer(self, question_id: str, decision: Decision, *, why: str = "") -> bool:
        """The person's answer. Returns False if the question is unknown or already answered. `why`: the no
        was not the person's (nobody was there to ask), said to the model as such."""
        future = self._pending.get(question_id)
        if future is None or future.done():
            return False
        if why:
            self._why[question_id] = why
        future.set_result(decision)
        return True

    def waited(self, question_id: str) -> float:
        """How long an answered question waited for its answer (0 when unknown), once: the person's time, not the
        tool's — a few bytes written read "39.1 s" when the card had waited that long."""
        return self._waited.pop(question_id, 0.0)

    def why(self, question_id: str) -> str:
        """Why an answered question's no was nobody's ("" when the person gave it), once."""
        return self._why.pop(question_id, "")

    def deny_all(self) -> None:
        """The answer channel went away (or the run stopped): every open question is a no."""
        for future in self._pending.values():
            if not future.done():
                future.set_result("deny")

    @property
    def open_questions(self) -> Sequence[str]:
        return list(self._pending)


def preview(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"

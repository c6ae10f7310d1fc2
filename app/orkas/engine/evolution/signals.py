"""What one run of an agent says about how it went, counted from the run's own events — no model call.

`Observer` is fed every event of a run (and the person's message that started it) and gives a `RunSignals`
at the end: tool calls, errors each marked transient (the environment: network, timeouts, 429/5xx/529,
overload) or real, the person's correction if their words read like one, provider retries, a stop by the
person, skills advertised and read. The product adds what only it sees (the person's edits to an answer,
"another answer", denied approvals) and keeps the record on disk; reflection reads them later.

Corrections are guessed by phrase rules in English, Chinese, Portuguese, Spanish, French and German. A guess
is a signal, not a verdict: the trigger weighs it with the others.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from orkas.engine.events import Done, Error, Event, Retry, ToolEnd, ToolStart

# Words that say the world failed, not the agent: a tool error matching one of these is transient.
_TRANSIENT = re.compile(
    r"time[ds]? ?out|timeout|deadline exceeded|connection (?:refused|reset|aborted|closed)|broken pipe|"
    r"network (?:is )?unreachable|no route to host|temporary failure|name resolution|could not resolve|"
    r"getaddrinfo|\bEAI_AGAIN\b|\bECONNRESET\b|\bETIMEDOUT\b|\bECONNREFUSED\b|rate.?limit|too many requests|"
    r"\b(?:HTTP|status|error|code)?\s*(?:429|500|502|503|504|529)\b|overloaded|service unavailable|bad gateway|"
    r"gateway time|try again later|temporarily unavailable",
    re.IGNORECASE,
)
TRANSIENT_CAUSES = frozenset({"rate_limit", "overloaded", "server", "timeout", "network", "stream"})
TRANSIENT_KINDS = frozenset({"rate_limit", "timeout"})

_CORRECTIONS = {
    "en": r"\bthat'?s (?:not (?:right|correct|it|what)|wrong|incorrect)\b|\bnot what i (?:asked|meant|wanted|said)\b|"
    r"\byou (?:forgot|missed|misunderstood|got it wrong|ignored)\b|\b(?:is|was|are) wrong\b|^\s*(?:no|nope)[,.!]|"
    r"\bwrong\b|\bactually[, ]|\binstead\b|\btry again\b|\bredo\b|\bdo it again\b|\bshould (?:be|have been)\b|"
    r"\bi (?:said|told you|asked for)\b|\bdon'?t (?:do|use|add|write) that\b|\bstop (?:doing|using)\b",
    "zh": r"不对|错了|不是这样|不正确|应该是|应该用|应该按|重新(?:做|来|写)|重做|再来一次|我说的是|我要的是|不是我要的|"
    r"理解错|搞错|别这样|不要这样|你忘了|漏了",
    "pt": r"não (?:está|esta) (?:certo|correto)|(?:está|esta) errad[oa]|\berrad[oa]\b|\bna verdade\b|deveria ser|"
    r"\brefa[çc]a\b|faça de novo|fa[çc]a novamente|não (?:foi|é) isso|em vez de|\beu disse\b|você esqueceu|"
    r"não era isso|de novo, (?:mas|por favor)",
    "es": r"no es (?:correcto|así|eso)|está mal|\bincorrecto\b|en realidad|debería ser|hazlo de nuevo|\brehaz\b|"
    r"no es lo que|en lugar de|\bte dije\b|te olvidaste|\bequivocad[oa]\b",
    "fr": r"ce n'est pas (?:ça|correct|juste|bon|ce que)|c'est faux|\ben fait\b|ça devrait être|\brefais\b|"
    r"\brecommence\b|au lieu de|je t'ai dit|tu as oublié|\bincorrect\b",
    "de": r"das ist (?:falsch|nicht richtig|nicht korrekt)|\bfalsch\b|\beigentlich\b|sollte (?:sein|lauten)|"
    r"mach(?:'s| es) (?:noch ?mal|erneut)|\bstattdessen\b|\bich sagte\b|du hast vergessen|nicht das,? was",
}
_CORRECTION = {
    language: re.compile(pattern, re.IGNORECASE | re.MULTILINE) for language, pattern in _CORRECTIONS.items()
}


def correction_in(text: str) -> tuple[str, str] | None:
    """(language, the words that matched) when the person's message reads like a correction, else None."""
    head = text[:2000]
    for language, pattern in _CORRECTION.items():
        match = pattern.search(head)
        if match:
            return language, match.group(0).strip()
    return None


def is_transient(text: str) -> bool:
    """A tool's error that says the environment failed (network, timeout, rate limit, an overloaded server)."""
    return bool(_TRANSIENT.search(text[:4000]))


@dataclass(slots=True)
class ToolError:
    tool: str
    transient: bool
    text: str  # the error's first line, cut: enough for reflection to know what went wrong


@dataclass(slots=True)
class RunSignals:
    """One run of one agent, as counted. `outcome`: done, error (real), transient (the provider kept failing)
    or stopped (the person stopped it)."""

    agent: str
    conversation: str
    at: float = field(default_factory=time.time)
    tool_calls: int = 0
    tools: dict[str, int] = field(default_factory=dict)
    errors: list[ToolError] = field(default_factory=list)
    retries: int = 0  # provider calls tried again (always transient)
    outcome: str = "done"
    correction: tuple[str, str] | None = None  # (language, matched words) in the person's message
    skills_advertised: list[str] = field(default_factory=list)
    skills_read: list[str] = field(default_factory=list)
    edits: int = 0  # the person changed this agent's answer afterwards (the product reports it)
    skips: int = 0  # approvals the person denied, questions left unanswered
    another_answer: int = 0  # the person asked for another answer to the same message

    @property
    def real_errors(self) -> list[ToolError]:
        return [e for e in self.errors if not e.transient]

    @property
    def transient_errors(self) -> list[ToolError]:
        return [e for e in self.errors if e.transient]

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["correction"] = list(self.correction) if self.correction else None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunSignals:
        errors = [ToolError(**e) for e in data.get("errors", [])]
        correction = data.get("correction")
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k not in ("errors", "correction")}
        return cls(**known, errors=errors, correction=tuple(correction) if correction else None)


class Observer:
    """Counts a run's signals from its events; `finish()` returns them. Cheap: a few comparisons per event."""

    def __init__(self, agent: str, conversation: str, prompt: str = "", advertised: Sequence[str] = ()) -> None:
        self.signals = RunSignals(agent=agent, conversation=conversation, skills_advertised=list(advertised))
        self.signals.correction = correction_in(prompt) if prompt else None
        self._inputs: dict[str, Any] = {}

    def see(self, event: Event) -> None:
        signals = self.signals
        if isinstance(event, ToolStart):
            signals.tool_calls += 1
            signals.tools[event.name] = signals.tools.get(event.name, 0) + 1
            if event.name == "skill_read" and not event.input.get("file"):
                name = str(event.input.get("name", ""))
                if name and name not in signals.skills_read:
                    signals.skills_read.append(name)
        elif isinstance(event, ToolEnd) and event.is_error:
            text = " ".join(getattr(block, "text", "") for block in event.content).strip()
            first = text.splitlines()[0][:300] if text else ""
            signals.errors.append(ToolError(event.name, is_transient(text), first))
        elif isinstance(event, Retry):
            signals.retries += 1
        elif isinstance(event, Error):
            if event.aborted:
                signals.outcome = "stopped"
            elif event.kind in TRANSIENT_KINDS or event.cause in TRANSIENT_CAUSES:
                signals.outcome = "transient"
            else:
                signals.outcome = "error"
        elif isinstance(event, Done):
            signals.outcome = "done"

    def see_all(self, events: Iterable[Event]) -> RunSignals:
        for event in events:
            self.see(event)
        return self.finish()

    def finish(self) -> RunSignals:
        return self.signals

"""What a reflection wanted but may not do alone, held for the person: `<data>/learned/<agent>/proposals/<id>.json`,
shown in Settings → Learning (and `orkas evolve status`) until they accept each proposal (every change applied and
recorded with its undo, like any other) or reject it. A reflection's changes are held when it read outside text
(tool output, a file, error text) or the full memory guard flags them."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from orkas.core.fsutil import atomic_write
from orkas.engine.evolution.memo import MemoChange
from orkas.engine.evolution.store import Change

log = logging.getLogger(__name__)
# (agent, kind, name, after, conversations): one change applied (evolution.py's `_apply`)
Apply = Callable[[str, str, str, str | None, Sequence[str]], None]


def rule_guard(text: str) -> str | None:
    """The memory guard's rules: a finding refuses the write."""
    from orkas.engine.memory.guard import rule_findings

    found = rule_findings(text)
    return found[0].reason if found else None


def full_guard(text: str) -> str | None:
    """The whole memory guard (rules, then the meaning layer): a finding holds the write for the person. The
    meaning layer flags many learned imperatives by nature (bench/RESULTS.md): they wait to be accepted."""
    from orkas.engine.memory.guard import scan_memory_text

    found = scan_memory_text(text)
    return found[0].reason if found else None


def last_of_each(changes: Sequence[tuple[str, Change | MemoChange]]) -> list[tuple[str, Change | MemoChange]]:
    """One change per skill or memo part — from what it was before the reflection to what it is at its end."""
    first: dict[tuple[str, str], Change | MemoChange] = {}
    last: dict[tuple[str, str], Change | MemoChange] = {}
    for kind, change in changes:
        key = (kind, change.name if isinstance(change, Change) else change.part)
        first.setdefault(key, change)
        last[key] = change
    merged: list[tuple[str, Change | MemoChange]] = []
    for (kind, name), change in last.items():
        before = first[(kind, name)].before
        if before == change.after:
            continue  # changed and changed back
        if isinstance(change, Change):
            merged.append((kind, Change(name, change.action, before, change.after)))
        else:
            merged.append((kind, MemoChange(change.part, before or "", change.after)))
    return merged


class Proposals:
    def __init__(self, folder: Path, clock: Callable[[], float]) -> None:
        self.folder = folder  # <data>/learned
        self.clock = clock

    def propose(
        self, agent: str, changes: list[dict[str, Any]], outside: Sequence[str], conversations: Sequence[str], why: str
    ) -> None:
        proposal = {
            "id": uuid.uuid4().hex[:12],
            "agent": agent,
            "at": self.clock(),
            "why": why,
            "outside": list(outside),
            "conversations": list(conversations),
            "changes": changes,
        }
        folder = self.folder / agent / "proposals"
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / f"{proposal['id']}.json", json.dumps(proposal, ensure_ascii=False, indent=1).encode())
        log.info("%s: a reflection's %d change(s) wait for the person (Settings → Learning)", agent, len(changes))

    def listed(self, agents: Sequence[str]) -> list[dict[str, Any]]:
        """These agents' proposals, newest first."""
        found: list[dict[str, Any]] = []
        for name in agents:
            for path in (self.folder / name / "proposals").glob("*.json"):
                try:
                    found.append(json.loads(path.read_text(encoding="utf-8")))
                except (OSError, ValueError):
                    continue
        return sorted(found, key=lambda p: p.get("at", 0), reverse=True)

    def decide(self, agent: str, proposal_id: str, accept: bool, apply: Apply) -> dict[str, Any]:
        """Accept (each change through `apply`) or reject; KeyError for a proposal that is not there."""
        if not proposal_id.isalnum():
            raise KeyError(proposal_id)
        path = self.folder / agent / "proposals" / f"{proposal_id}.json"
        try:
            proposal = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise KeyError(proposal_id) from None
        if accept:
            for change in proposal["changes"]:
                apply(agent, change["kind"], change["name"], change["after"], proposal.get("conversations", []))
        path.unlink(missing_ok=True)
        return dict(proposal)

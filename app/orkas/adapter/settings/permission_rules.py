"""The person's "always allow" rules, kept in `<data>/permission_rules.json` so they can be seen and removed.

A damaged file is reported and treated as empty (asking again is the safe failure); it is never
overwritten until the person adds or removes a rule.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from orkas.core.fsutil import atomic_write
from orkas.engine.consent import AllowRule

log = logging.getLogger(__name__)


class RuleStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None  # why the file could not be read, for the person

    def load(self) -> list[AllowRule]:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text())
            return [AllowRule(workspace=str(r["workspace"]), key=str(r["key"])) for r in data["rules"]]
        except (OSError, ValueError, KeyError, TypeError) as e:
            self.problem = f"{self.path} could not be read ({type(e).__name__}); no rule applies until it is fixed"
            log.warning("permission rules unreadable: %s", type(e).__name__)
            return []

    def for_workspace(self, workspace: Path) -> list[AllowRule]:
        return [r for r in self.load() if r.workspace == str(workspace)]

    def add(self, rule: AllowRule) -> None:
        rules = self.load()
        if rule not in rules:
            self._save([*rules, rule])

    def remove(self, key: str, workspace: Path | None = None) -> list[AllowRule]:
        """Remove the rules for `key` (in `workspace`, or everywhere). Returns what was removed."""
        rules = self.load()
        removed = [r for r in rules if r.key == key and (workspace is None or r.workspace == str(workspace))]
        if removed:
            self._save([r for r in rules if r not in removed])
        return removed

    def _save(self, rules: list[AllowRule]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"rules": [{"workspace": r.workspace, "key": r.key} for r in rules]}
        atomic_write(self.path, (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode())

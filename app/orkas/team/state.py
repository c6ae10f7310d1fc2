"""The whole orchestration state of a group conversation: who holds the floor, the members, the task
log, and how far each actor has read the bus. `state.json`, replaced atomically; no plan graph."""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from orkas.core.errors import ConfigError
from orkas.core.fsutil import atomic_write
from orkas.team.bus import COMMANDER

log = logging.getLogger(__name__)

TaskStatus = Literal["open", "done", "failed", "cancelled", "interrupted"]
FloorSource = Literal["default", "user_selection", "commander_handoff"]


@dataclass(slots=True)
class Task:
    id: str
    owner: str
    goal: str
    status: TaskStatus = "open"
    created: float = field(default_factory=time.time)
    result: str = ""


@dataclass(slots=True)
class GroupState:
    members: list[str] = field(default_factory=list)
    floor: str = COMMANDER
    floor_source: FloorSource = "default"
    tasks: list[Task] = field(default_factory=list)
    cursors: dict[str, str] = field(default_factory=dict)  # actor -> the last bus message it was given
    running: bool = False  # a turn was in progress (true after a crash: its open tasks are interrupted)

    def open_tasks(self) -> list[Task]:
        return [t for t in self.tasks if t.status == "open"]


class StateStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.state = self._load()

    def _load(self) -> GroupState:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return GroupState()
        except (OSError, ValueError) as e:
            log.warning("group state %s unreadable (%s); starting from the defaults", self.path, e)
            return GroupState()
        tasks = [Task(**t) for t in data.get("tasks", []) if isinstance(t, dict)]
        return GroupState(
            members=[str(m) for m in data.get("members", [])],
            floor=str(data.get("floor") or COMMANDER),
            floor_source=data.get("floor_source", "default"),
            tasks=tasks,
            cursors={str(k): str(v) for k, v in (data.get("cursors") or {}).items()},
            running=bool(data.get("running", False)),
        )

    def save(self) -> None:
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(asdict(self.state), ensure_ascii=False, indent=1).encode())

    def recover(self) -> list[Task]:
        """After a crash mid-turn: open tasks become interrupted (the person decides to go on)."""
        if not self.state.running:
            return []
        interrupted = self.state.open_tasks()
        for task in interrupted:
            task.status = "interrupted"
        self.state.running = False
        self.save()
        return interrupted

    def set_members(self, names: Sequence[str], known: Collection[str]) -> None:
        """The conversation's members (each an agent that exists); a floor held by one who left returns."""
        for name in names:
            if name not in known:
                raise ConfigError(
                    f"no agent {name!r} to add to the conversation; agents: {', '.join(sorted(known)) or 'none'}"
                )
        self.state.members = list(dict.fromkeys(names))
        if self.state.floor not in (COMMANDER, *self.state.members):
            self.state.floor, self.state.floor_source = COMMANDER, "default"
        self.save()

    def hand_back(self) -> bool:
        """The person gives the floor back to the commander; False when the commander already held it."""
        if self.state.floor == COMMANDER:
            return False
        self.state.floor, self.state.floor_source = COMMANDER, "user_selection"
        self.save()
        return True

    def add_task(self, owner: str, goal: str) -> Task:
        task = Task(id=uuid.uuid4().hex[:12], owner=owner, goal=goal)
        self.state.tasks.append(task)
        self.save()
        return task

    def finish(self, task: Task, status: TaskStatus, result: str = "") -> None:
        task.status = status
        task.result = result[:2000]
        self.save()

    def public(self) -> dict[str, Any]:
        return asdict(self.state)

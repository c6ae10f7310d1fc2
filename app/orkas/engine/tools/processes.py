"""A conversation's background processes (process_start and kin, shell.py): the manager outlives a turn and is
made with the conversation — before any executor exists, so this module loads none of the sandbox."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orkas.engine.sandbox.executor import Background, Executor
    from orkas.engine.tools.shell import Approved

MAX_PROCESSES = 8


@dataclass
class ManagedProcess:
    id: str
    command: str
    log: Path
    process: Background
    started: float = field(default_factory=time.time)


class ProcessManager:
    """Background processes of a conversation: at most `MAX_PROCESSES` running at once. It outlives a
    turn; each turn binds the executor it runs with (`bind`), which new processes start through."""

    def __init__(self, executor: Executor | None, log_dir: Path) -> None:
        self._executor = executor
        self.log_dir = log_dir
        self.processes: dict[str, ManagedProcess] = {}
        self._ids = itertools.count(1)

    @property
    def executor(self) -> Executor:
        if self._executor is None:
            raise RuntimeError("no executor bound: bind() one before starting processes")
        return self._executor

    def bind(self, executor: Executor) -> None:
        self._executor = executor

    def running(self) -> list[ManagedProcess]:
        return [p for p in self.processes.values() if p.process.returncode is None]

    async def start(self, command: str, cwd: Path | None, approved: Approved) -> ManagedProcess:
        ident = f"p{next(self._ids)}"
        log = self.log_dir / f"{ident}-{int(time.time())}.log"
        process = await self.executor.start(
            command,
            log_path=log,
            cwd=cwd,
            network=approved.network,
            unconfined=approved.unconfined,
            writable=approved.writable,
            secrets=approved.secrets,
        )
        entry = ManagedProcess(ident, command, log, process)
        self.processes[ident] = entry
        return entry

    async def stop_all(self) -> None:
        for entry in self.running():
            await entry.process.stop()

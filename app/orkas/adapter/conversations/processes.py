"""Background processes belong to the conversation that started them, not to the turn: a dev server
started in one turn is there in the next (process_status/read/stop find it), the cap counts every
process of the conversation, and they are stopped when the conversation is deleted, when the app exits
and when the person asks to stop them all.

Each conversation gets one `ProcessManager`; every turn binds it to that turn's executor (the grants
may have changed), so new processes start under the newest confinement while old ones keep running.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from orkas.engine.tools.processes import ProcessManager


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    id: str
    command: str
    running: bool
    exit_code: int | None
    started: float
    log: str


class ConversationProcesses:
    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self._managers: dict[str, ProcessManager] = {}

    def manager(self, conversation_id: str) -> ProcessManager:
        manager = self._managers.get(conversation_id)
        if manager is None:
            manager = self._managers[conversation_id] = ProcessManager(None, self.log_dir)
        return manager

    def listed(self, conversation_id: str) -> list[ProcessInfo]:
        manager = self._managers.get(conversation_id)
        if manager is None:
            return []
        return [
            ProcessInfo(p.id, p.command, p.process.returncode is None, p.process.returncode, p.started, str(p.log))
            for p in manager.processes.values()
        ]

    def running(self, conversation_id: str) -> int:
        manager = self._managers.get(conversation_id)
        return len(manager.running()) if manager is not None else 0

    async def stop(self, conversation_id: str) -> int:
        """Stop every running process of the conversation; how many there were."""
        manager = self._managers.get(conversation_id)
        if manager is None:
            return 0
        count = len(manager.running())
        await manager.stop_all()
        return count

    async def forget(self, conversation_id: str) -> None:
        """The conversation is gone: stop its processes and drop them."""
        await self.stop(conversation_id)
        self._managers.pop(conversation_id, None)

    async def stop_all(self) -> None:
        for conversation_id in list(self._managers):
            await self.stop(conversation_id)

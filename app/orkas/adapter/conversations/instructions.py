"""A conversation's project instructions, as every view and the assembly see them.

One `ProjectInstructions` per conversation and folder (engine/instructions.py): its subfolders touched by agents
stay joined from turn to turn while the app runs. Whether its files instruct or are only read as outside data is
the person's answer about the project's root (adapter/settings/trust.py), asked again at every turn, so a trust
given or revoked in Settings or a terminal applies from the next one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orkas.adapter.conversations.store import Conversation
from orkas.adapter.settings.trust import FolderTrust
from orkas.adapter.wire import InstructionsInForce
from orkas.engine.instructions import ProjectInstructions, project_root, shadowed, shown_path


@dataclass(frozen=True, slots=True)
class Status:
    """What a view shows and asks: the files in force (with their text), the ones outranked, the answer."""

    root: Path
    files: list[dict[str, str]]
    shadowed: list[str]
    trust: str  # "trusted", "declined" or "unanswered"

    def as_json(self) -> dict[str, Any]:
        return {"root": str(self.root), "files": self.files, "shadowed": self.shadowed, "trust": self.trust}


class Instructions:
    def __init__(self, trust: FolderTrust, data: Path | None = None, home: Path | None = None) -> None:
        self.trust = trust
        self.data = data.resolve() if data is not None else None  # a chat's own folder there is no repository's
        self.home = home.resolve() if home is not None else None  # nor is a home folder kept in git (dotfiles)
        self._projects: dict[tuple[str, Path], ProjectInstructions] = {}

    def project(self, conversation: Conversation) -> ProjectInstructions:
        key = (conversation.id, conversation.workspace_path)
        if key not in self._projects:
            folder = conversation.workspace_path
            alone = self.data is not None and folder.resolve().is_relative_to(self.data)
            if self.home is not None and project_root(folder) in (self.home, *self.home.parents):
                alone = True  # ~/.git makes no project of every folder in the home: each is its own
            project = ProjectInstructions(folder=folder, trusted=lambda: False, alone=alone)
            project.trusted = lambda: self.trust.trusts(project.root)  # asked at every turn
            self._projects[key] = project
        return self._projects[key]

    def status(self, conversation: Conversation) -> Status:
        return self.said(self.project(conversation))

    def for_folder(self, folder: Path) -> Status:
        """A folder a new chat is about to work in (asked about before its first message)."""
        return self.said(ProjectInstructions(folder=folder, trusted=lambda: False))

    def said(self, project: ProjectInstructions) -> Status:
        root = project.root
        files = [{"path": shown_path(root, f.path), "kind": f.kind, "text": f.text} for f in project.files()]
        answer = self.trust.answer(root) or "unanswered"
        return Status(root, files, [shown_path(root, p) for p in shadowed(root, project.folder)], answer)

    def in_force(self, conversation: Conversation) -> InstructionsInForce | None:
        """What a run starting now reads (None: the folder has no instruction file)."""
        said = self.status(conversation)
        if not said.files:
            return None
        return InstructionsInForce(
            root=str(said.root),
            files=tuple(f["path"] for f in said.files),
            trusted=said.trust == "trusted",
            shadowed=tuple(said.shadowed),
        )

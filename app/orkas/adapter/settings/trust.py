"""Folder trust: whether a folder's instruction files (AGENTS.md and kin) may instruct Orkas's agents.

A repository someone downloaded can carry hostile instructions, so a folder's files reach the model as instructions
only once the person said to trust it — in the window's question, Settings, or `orkas trust add`. The answers live in
`<data>/trusted_folders.json`, by folder: "trusted", or "declined" (asked once: not asked again). A folder's answer is
its own or, failing that, its nearest answered parent's, so trusting `~/code` covers the repositories in it and a
"declined" nearer wins. A damaged file is reported and read as no answer at all: untrusted is the safe failure.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orkas.core.errors import ConfigError
from orkas.core.fsutil import atomic_write

log = logging.getLogger(__name__)
Answer = Literal["trusted", "declined"]
ANSWERS: tuple[Answer, ...] = ("trusted", "declined")


@dataclass(frozen=True, slots=True)
class Answered:
    folder: str
    answer: Answer
    at: float  # when, seconds since the epoch


class FolderTrust:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None

    def load(self) -> dict[str, Answered]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text())
            found = [Answered(str(f["folder"]), f["answer"], float(f.get("at", 0))) for f in data["folders"]]
            self.problem = None
            return {a.folder: a for a in found if a.answer in ANSWERS}
        except (OSError, ValueError, KeyError, TypeError) as e:
            self.problem = f"{self.path} could not be read ({type(e).__name__}); no folder is trusted until it is fixed"
            log.warning("folder trust unreadable: %s", type(e).__name__)
            return {}

    def answer(self, folder: Path) -> Answer | None:
        """The answer in force for `folder`: its own, else its nearest answered parent's; None when never asked."""
        answers = self.load()
        folder = folder.resolve()
        for step in (folder, *folder.parents):
            if str(step) in answers:
                return answers[str(step)].answer
        return None

    def trusts(self, folder: Path) -> bool:
        return self.answer(folder) == "trusted"

    def set(self, folder: Path, answer: Answer) -> Answered:
        if answer not in ANSWERS:
            raise ConfigError(f"a folder is trusted or declined, not {answer!r}")
        folder = folder.expanduser().resolve()
        if not folder.is_dir():
            raise ConfigError(f"{folder} is not a folder")
        given = Answered(str(folder), answer, time.time())
        self._save({**self.load(), given.folder: given})
        return given

    def remove(self, folder: Path) -> bool:
        """Forget the answer for exactly `folder` (its files are outside data again, and asked about once more)."""
        answers = self.load()
        given = folder.expanduser()
        # As typed, or as it resolves now: a link re-pointed since still names the folder it was trusted as.
        key = next((str(p) for p in (given.absolute(), given.resolve()) if str(p) in answers), None)
        if key is None:
            return False
        del answers[key]
        self._save(answers)
        return True

    def trusted(self) -> list[Answered]:
        return sorted((a for a in self.load().values() if a.answer == "trusted"), key=lambda a: a.folder)

    def _save(self, answers: dict[str, Answered]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"folders": [{"folder": a.folder, "answer": a.answer, "at": a.at} for a in answers.values()]}
        atomic_write(self.path, (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode())

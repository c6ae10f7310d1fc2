"""The person's switches for skills, in `<data>/skills.json`: global folders on or off (all, or one by
one), folders they added, skills they turned off. A damaged file means the defaults, with a warning."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path

from orkas.core.fsutil import atomic_write

log = logging.getLogger(__name__)


@dataclass(slots=True)
class SkillSettings:
    global_enabled: bool = True
    folders: list[str] = field(default_factory=list)  # more global folders the person added
    off: list[str] = field(default_factory=list)  # global folders switched off one by one
    disabled: list[str] = field(default_factory=list)  # skills switched off, by path


class SettingsFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> SkillSettings:
        try:
            raw = json.loads(self.path.read_text())
        except FileNotFoundError:
            return SkillSettings()
        except (OSError, ValueError) as e:
            log.warning("skill settings %s unreadable (%s): using the defaults", self.path, type(e).__name__)
            return SkillSettings()
        if not isinstance(raw, dict):
            return SkillSettings()
        return SkillSettings(
            global_enabled=raw.get("global_enabled", True) is not False,
            folders=[str(f) for f in raw.get("folders", []) if isinstance(f, str)],
            off=[str(f) for f in raw.get("off", []) if isinstance(f, str)],
            disabled=[str(f) for f in raw.get("disabled", []) if isinstance(f, str)],
        )

    def save(self, settings: SkillSettings) -> None:
        atomic_write(self.path, (json.dumps(asdict(settings), indent=2, ensure_ascii=False) + "\n").encode())

"""The person's own instructions, brought from the terminal agents they already use.

People arriving from Claude Code, Codex or Gemini CLI keep their standing instructions in `~/.claude/CLAUDE.md`,
`~/.codex/AGENTS.md`, `~/.gemini/GEMINI.md`. Orkas offers, once, to use one: read live (their edits there apply here
from the next turn) or imported as a copy into Orkas's own (`personal_instructions`, edited in Settings). Nothing is
read before that answer: the offer only says which files exist. They are the person's own words, so they reach every
agent's prompt as instructions (after an agent's own prompt, before the project's files).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orkas.adapter.settings.store import Preferences, SettingsStore
from orkas.core.errors import ConfigError

MAX_BYTES = 32 * 1024


@dataclass(frozen=True, slots=True)
class Known:
    key: str
    tool: str
    relative: str  # under the home folder


KNOWN = (
    Known("claude", "Claude Code", ".claude/CLAUDE.md"),
    Known("codex", "Codex", ".codex/AGENTS.md"),
    Known("gemini", "Gemini CLI", ".gemini/GEMINI.md"),
)
How = Literal["live", "import", "no"]


def found(home: Path) -> list[dict[str, str | int]]:
    """The other agents' instruction files that exist (their names and sizes only: nothing is read)."""
    out: list[dict[str, str | int]] = []
    for known in KNOWN:
        path = home / known.relative
        try:
            if path.is_file():
                size = path.stat().st_size
                out.append({"key": known.key, "tool": known.tool, "path": f"~/{known.relative}", "size": size})
        except OSError:
            continue
    return out


def read(home: Path, key: str) -> str:
    known = next((k for k in KNOWN if k.key == key), None)
    if known is None:
        raise ConfigError(f"no known instructions file {key!r}: one of {', '.join(k.key for k in KNOWN)}")
    try:
        with (home / known.relative).open("rb") as f:
            return f.read(MAX_BYTES).decode("utf-8", errors="replace").strip()
    except OSError as e:
        raise ConfigError(f"~/{known.relative} could not be read ({e.strerror or type(e).__name__})") from e


def choose(store: SettingsStore, home: Path, key: str, how: How) -> Preferences:
    """The person's answer to the offer: `live`, `import` (a copy, from now on Orkas's own) or `no`."""
    product = store.load()
    preferences = product.preferences
    if how == "live":
        read(home, key)  # it must be readable now, not fail at every turn
        preferences.personal_file = key
    elif how == "import":
        preferences.personal_instructions = read(home, key)
        preferences.personal_file = ""
    elif how != "no":
        raise ConfigError(f"use the file live, import it, or no — not {how!r}")
    preferences.instructions_offered = True
    preferences.check()
    store.save(product)
    return preferences


def section(preferences: Preferences, home: Path) -> str | None:
    """The prompt's section for the person's own instructions (None when they have none)."""
    parts: list[str] = []
    if preferences.personal_instructions.strip():
        parts.append(preferences.personal_instructions.strip())
    if preferences.personal_file:
        known = next(k for k in KNOWN if k.key == preferences.personal_file)
        try:
            text = read(home, known.key)
        except ConfigError:
            text = ""  # moved or removed since: nothing to add (Settings says the file is missing)
        if text:
            parts.append(f"(from ~/{known.relative}, as the user wrote it for {known.tool})\n{text}")
    if not parts:
        return None
    return "The user's own standing instructions, for every chat:\n\n" + "\n\n".join(parts)

"""Project instruction files, found the way the coding agents' ecosystem writes them (issue 36, first step).

From the workspace's root down to the folder the agent works in, each folder gives at most one file: `AGENTS.md`,
or — only where there is none — `CLAUDE.md`, `GEMINI.md` or `.goosehints`, in that order (which one won is kept, to
be said). Nearer folders come later, so they read as overriding. A personal `<NAME>.local.md` beside the winner
(`CLAUDE.local.md`, `AGENTS.local.md`) follows it. `@path` imports pull in other files of the workspace, a few levels
deep, each once; never a file outside the workspace, never through a link (a downloaded repository can carry a link
to ~/.ssh), never past the size cap. Whether the text reaches the model as instructions or only as outside data is
folder trust's business, not this module's: it only finds and reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".goosehints")  # one per folder: the first found wins
MAX_BYTES = 32 * 1024  # all files together (Codex's default for its project docs)
MAX_DEPTH = 5  # imports of imports
IMPORT = re.compile(r"(?<![\w`])@((?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)*)")  # `@docs/style.md`, not `a@b.c` or code


@dataclass(frozen=True, slots=True)
class InstructionFile:
    path: Path
    text: str
    kind: str  # "project" (the folder's winner), "personal" (its .local.md), "import" (pulled in by @path)


def discover(root: Path, folder: Path | None = None) -> list[InstructionFile]:
    """The instruction files in force for an agent working in `folder` (the root by default), in reading order."""
    root = root.resolve()
    target = (folder or root).resolve()
    if target != root and root not in target.parents:
        return []
    chain = [root, *reversed([p for p in target.parents if root in p.parents]), *([target] if target != root else [])]
    found: list[InstructionFile] = []
    seen: set[Path] = set()
    budget = [MAX_BYTES]
    for directory in chain:
        winner = next((directory / n for n in NAMES if _plain_file(root, directory / n)), None)
        if winner is None:
            continue
        _add(root, winner, "project", found, seen, budget, 0)
        personal = directory / f"{Path(winner.name).stem.lstrip('.')}.local.md"
        if _plain_file(root, personal):
            _add(root, personal, "personal", found, seen, budget, 0)
    return found


def _add(
    root: Path, path: Path, kind: str, found: list[InstructionFile], seen: set[Path], budget: list[int], depth: int
) -> None:
    if path in seen or budget[0] <= 0:
        return
    seen.add(path)
    data = path.read_bytes()[: budget[0]]
    budget[0] -= len(data)
    text = data.decode("utf-8", errors="replace").strip()
    if not text:
        return
    found.append(InstructionFile(path=path, text=text, kind=kind))
    if depth >= MAX_DEPTH:
        return
    for name in IMPORT.findall(_outside_code(text)):
        imported = path.parent / name
        if _plain_file(root, imported):
            _add(root, imported.resolve(), "import", found, seen, budget, depth + 1)


def _plain_file(root: Path, path: Path) -> bool:
    """A regular file inside the workspace, reached through no link at any step."""
    try:
        normal = Path(*_normalized(path.parts))
        if root not in normal.parents:
            return False
        step = root
        for part in normal.relative_to(root).parts:
            step = step / part
            if step.is_symlink():
                return False
        return normal.is_file()
    except (OSError, ValueError):
        return False


def _normalized(parts: tuple[str, ...]) -> list[str]:
    """`..` and `.` taken out by the path's own words (never by following a link)."""
    out: list[str] = []
    for part in parts:
        if part == "..":
            if len(out) > 1:
                out.pop()
        elif part != ".":
            out.append(part)
    return out


def _outside_code(text: str) -> str:
    """The text without its code blocks and spans: an `@decorator` in an example is no import."""
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)

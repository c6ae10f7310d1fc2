"""Agents are folders: `<data>/agents/<name>/AGENT.md`, YAML frontmatter and a Markdown body that is the
agent's system prompt. Hand-editable: a broken file is reported by name and the others still load.

    ---
    name: tutor
    description: Explains a topic step by step; use for teaching.
    model: anthropic/claude-sonnet-4-5      # optional: its own model (provider/model, or a name providers route)
    tools: [read_file, grep_files]          # optional allow-list
    skills: [pdf-tables]                    # optional: the trusted skills it may use (default: all shared)
    interactive: true                       # may hold the floor after a hand-off
    color: "#3a7"                           # optional: #rgb or #rrggbb (else one derived from the name)
    ---
    You are a patient tutor…

Each agent has a look — a colour and an initial — shown on its bubbles, in the member bar and in the `@`
names: its chosen colour, or one of `PALETTE` picked by a stable hash of its name (the same in every process
and on every machine), so two agents rarely look alike and none changes between launches.
"""

from __future__ import annotations

import re
import shutil
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from orkas.adapter.agents.bridge import CAPABILITIES
from orkas.adapter.agents.external import BACKENDS
from orkas.core.errors import ConfigError
from orkas.core.fsutil import atomic_write

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}\Z")
RESERVED = frozenset({"user", "commander", "all", "everyone", "worker", "orkas"})  # the bus's actors, Orkas itself
FILE = "AGENT.md"
MAX_PROMPT = 64 * 1024
MODEL = re.compile(r"^[^\s/][^\s]{0,199}\Z")
COLOR = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z")
# White initials read on each of these (contrast ≥ 5:1), in light and dark themes alike.
PALETTE = (
    "#2563eb", "#0f766e", "#7c3aed", "#b45309", "#be185d",
    "#15803d", "#c2410c", "#4f46e5", "#0369a1", "#a21caf",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class AgentSpec:
    name: str
    description: str
    prompt: str
    model: str | None = None
    tools: tuple[str, ...] | None = None  # None: every tool of the workspace
    interactive: bool = False
    color: str | None = None
    avatar: str | None = None
    worktree: bool = False  # writes in its own git worktree when the workspace is a repository
    skills: tuple[str, ...] | None = None  # None: every shared trusted skill and its own
    backend: str | None = None  # claude | codex | opencode: an external agent CLI runs this member
    cli: str | None = None  # that CLI's path (default: the backend's name on PATH)
    bridge: tuple[str, ...] | None = None  # what its bridge to Orkas allows (None: every capability)
    cli_found: bool | None = None  # an external agent's CLI was found when loaded (None: not looked for)

    def public(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "prompt": self.prompt,
            "model": self.model,
            "tools": list(self.tools) if self.tools is not None else None,
            "interactive": self.interactive,
            "color": self.color,  # the chosen one (None: derived, see `look`)
            "look": look(self.name, self.color),
            "avatar": self.avatar,
            "worktree": self.worktree,
            "skills": list(self.skills) if self.skills is not None else None,
            "backend": self.backend,
            "cli": self.cli,
            "bridge": list(self.bridge) if self.bridge is not None else None,
            "cli_found": self.cli_found,
        }


@dataclass(frozen=True, slots=True)
class Loaded:
    agents: dict[str, AgentSpec] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # folder name -> what is wrong, in a sentence


def check_color(color: object) -> str:
    """A chosen colour as written (`#rgb` or `#rrggbb`); ConfigError for anything else."""
    if not isinstance(color, str) or not COLOR.match(color):
        raise ConfigError(f'color must be #rgb or #rrggbb, e.g. "#3a7" (quoted in YAML), not {color!r}')
    return color


def look(name: str, color: str | None = None) -> dict[str, str]:
    """How an agent is drawn: `color` (#rrggbb: the chosen one, else derived from the name), `ink` (the
    initial's colour that reads on it) and `initial`. Every view takes it from here; none derives its own."""
    if color is None:
        shown = PALETTE[zlib.crc32(name.encode("utf-8")) % len(PALETTE)]
    else:
        digits = check_color(color)[1:].lower()
        shown = "#" + (digits if len(digits) == 6 else "".join(c * 2 for c in digits))
    return {"color": shown, "ink": _ink(shown), "initial": name[:1].upper()}


def _ink(color: str) -> str:
    """Black or white, whichever contrasts more with `color` (WCAG relative luminance)."""

    def channel(hex2: str) -> float:
        c = int(hex2, 16) / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(color[i : i + 2]) for i in (1, 3, 5))
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#ffffff" if (1.05 / (luminance + 0.05)) >= ((luminance + 0.05) / 0.05) else "#000000"


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise ConfigError(
            f"agent name {name!r}: use 1-32 lowercase letters, digits, - or _, starting with a letter or digit"
        )
    if name in RESERVED:
        raise ConfigError(f"agent name {name!r} is reserved ({', '.join(sorted(RESERVED))})")
    return name


def parse(text: str, *, folder_name: str) -> AgentSpec:
    """One AGENT.md; raises ConfigError with a sentence saying what is wrong."""
    if not text.startswith("---"):
        raise ConfigError("AGENT.md must start with a --- frontmatter block")
    parts = text.split("\n---", 1)
    if len(parts) != 2:
        raise ConfigError("the frontmatter block is not closed with ---")
    try:
        meta = yaml.safe_load(parts[0].removeprefix("---")) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"the frontmatter is not valid YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(meta, dict):
        raise ConfigError("the frontmatter must be a table of fields")
    body = parts[1].split("\n", 1)[1] if "\n" in parts[1] else ""
    name = str(meta.get("name") or folder_name)
    check_name(name)
    if name != folder_name:
        raise ConfigError(f"its name {name!r} differs from its folder {folder_name!r}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ConfigError("description is required: say when the commander should use this agent")
    prompt = body.strip()
    if not prompt:
        raise ConfigError("the body (the agent's instructions) is empty")
    if len(prompt) > MAX_PROMPT:
        raise ConfigError(f"the instructions are longer than {MAX_PROMPT // 1024} KB")
    model = meta.get("model")
    # As the model switcher offers them (/api/models): provider/model, or a name the providers route.
    if model is not None and (not isinstance(model, str) or not MODEL.match(model)):
        raise ConfigError("model must be provider/model or a model's name, e.g. anthropic/claude-sonnet-4-5")
    tools = meta.get("tools")
    if tools is not None:
        if isinstance(tools, str):
            tools = [t.strip() for t in tools.split(",") if t.strip()]
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            raise ConfigError("tools must be a list of tool names")
    skills = meta.get("skills")
    if skills is not None:
        if isinstance(skills, str):
            skills = [t.strip() for t in skills.split(",") if t.strip()]
        if not isinstance(skills, list) or not all(isinstance(t, str) for t in skills):
            raise ConfigError("skills must be a list of skill names")
    backend, cli = meta.get("backend"), meta.get("cli")
    if backend is not None and backend not in BACKENDS:
        raise ConfigError(f"backend must be one of {', '.join(BACKENDS)} (an external agent CLI), not {backend!r}")
    if cli is not None and (backend is None or not isinstance(cli, str) or not cli.strip() or "\n" in cli):
        raise ConfigError("cli is the path of the backend's program: give `backend` too")
    bridge = meta.get("bridge")
    if bridge is not None:
        if isinstance(bridge, str):
            bridge = [t.strip() for t in bridge.split(",") if t.strip()]
        if not isinstance(bridge, list) or not set(bridge) <= set(CAPABILITIES):
            raise ConfigError(f"bridge must list capabilities among {', '.join(CAPABILITIES)}")
    for flag in ("interactive", "worktree"):
        if not isinstance(meta.get(flag, False), bool):
            raise ConfigError(f"{flag} must be true or false")
    color = meta.get("color") or None  # an empty field: not chosen
    if color is not None:
        color = check_color(color)
    return AgentSpec(
        name=name,
        description=description.strip(),
        prompt=prompt,
        model=model,
        tools=tuple(tools) if tools is not None else None,
        interactive=bool(meta.get("interactive", False)),
        color=color,
        avatar=str(meta["avatar"]) if meta.get("avatar") else None,
        worktree=bool(meta.get("worktree", False)),
        skills=tuple(skills) if skills is not None else None,
        backend=backend,
        cli=cli.strip() if isinstance(cli, str) else None,
        bridge=tuple(bridge) if bridge is not None else None,
    )


def render(spec: AgentSpec) -> str:
    meta: dict[str, Any] = {"name": spec.name, "description": spec.description}
    if spec.model:
        meta["model"] = spec.model
    if spec.tools is not None:
        meta["tools"] = list(spec.tools)
    if spec.skills is not None:
        meta["skills"] = list(spec.skills)
    meta["interactive"] = spec.interactive
    if spec.worktree:
        meta["worktree"] = True
    if spec.color:
        meta["color"] = spec.color
    if spec.avatar:
        meta["avatar"] = spec.avatar
    if spec.backend:
        meta["backend"] = spec.backend
    if spec.cli:
        meta["cli"] = spec.cli
    if spec.bridge is not None:
        meta["bridge"] = list(spec.bridge)
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).strip()
    return f"---\n{front}\n---\n{spec.prompt.strip()}\n"


class AgentStore:
    def __init__(self, folder: Path, search_path: str | None = None) -> None:
        """`search_path`: the PATH an external agent's CLI is looked for on (a missing one is said, not hidden)."""
        self.folder = folder
        self.search_path = search_path

    def load(self) -> Loaded:
        loaded = Loaded()
        if not self.folder.is_dir():
            return loaded
        for path in sorted(self.folder.iterdir()):
            if not path.is_dir() or path.name.startswith("."):
                continue
            try:
                text = (path / FILE).read_text(encoding="utf-8")
                spec = parse(text, folder_name=path.name)
                if spec.backend is not None and self.search_path is not None:
                    from orkas.adapter.agents.external import find_cli

                    backend = next(b for b in BACKENDS if b == spec.backend)
                    spec = replace(spec, cli_found=find_cli(backend, spec.cli, self.search_path) is not None)
                loaded.agents[path.name] = spec
            except FileNotFoundError:
                loaded.problems[path.name] = f"no {FILE} in the folder"
            except (OSError, UnicodeDecodeError) as e:
                loaded.problems[path.name] = f"cannot read {FILE}: {e}"
            except ConfigError as e:
                loaded.problems[path.name] = str(e)
        return loaded

    def get(self, name: str) -> AgentSpec:
        loaded = self.load()
        if name in loaded.agents:
            return loaded.agents[name]
        if name in loaded.problems:
            raise ConfigError(f"agent {name!r} cannot be used: {loaded.problems[name]}")
        known = ", ".join(loaded.agents) or "none"
        raise ConfigError(f"no agent {name!r}; agents: {known}")

    def add(self, spec: AgentSpec, *, replace: bool = False) -> Path:
        check_name(spec.name)
        parse(render(spec), folder_name=spec.name)  # the same checks as a hand-written file
        folder = self.folder / spec.name
        if (folder / FILE).exists() and not replace:
            raise ConfigError(f"an agent named {spec.name!r} already exists")
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / FILE, render(spec).encode("utf-8"))
        return folder / FILE

    def remove(self, name: str) -> bool:
        check_name(name)
        folder = self.folder / name
        if not folder.is_dir():
            return False
        shutil.rmtree(folder)
        return True

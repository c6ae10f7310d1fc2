"""What the local API's routes need beyond the runtime, built by the composition root (host.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orkas.adapter.connectors.hub import ConnectorHub
from orkas.adapter.conversations.attachments import AttachmentStore
from orkas.adapter.conversations.instructions import Instructions
from orkas.adapter.knowledge.service import KnowledgeService
from orkas.adapter.learning.evolution import Evolution
from orkas.adapter.packages.store import Packages
from orkas.adapter.schedules.store import ScheduleStore
from orkas.adapter.settings.permission_rules import RuleStore
from orkas.adapter.settings.store import SettingsStore
from orkas.adapter.settings.usage import UsageLedger
from orkas.adapter.settings.vault import Vault
from orkas.adapter.skills.roots import SkillRegistry
from orkas.core.crashes import CrashReports
from orkas.core.resources import frontend_dir
from orkas.engine.memory import Memory
from orkas.server.agents_routes import Members
from orkas.server.loop_watch import LoopWatch
from orkas.server.mirror.routes import MirrorControl
from orkas.team.agents import AgentStore

if TYPE_CHECKING:
    from orkas.adapter.updates.updater import Updater

FRONTEND = frontend_dir()


@dataclass
class Services:
    """What the routes need beyond the runtime, built by the composition root."""

    settings: SettingsStore
    vault: Callable[[], Vault]  # opened when keys are touched, so the OS keyring wakes only then
    attachments: AttachmentStore
    protected: Callable[[], tuple[Path, ...]]  # never granted, never attached
    test_provider: Callable[[str], Awaitable[list[dict[str, Any]]]]
    detect_local: Callable[[], Awaitable[list[dict[str, Any]]]]
    memory: Memory | None = None
    knowledge: KnowledgeService | None = None
    sandbox: Callable[[], dict[str, Any]] | None = None  # what confines commands, in words
    frontend: Path = FRONTEND
    crashes: CrashReports | None = None  # where this launch keeps crash reports (the page's too)
    diagnostics: Callable[[], Awaitable[Path]] | None = None  # writes a bundle into diagnostics_folder
    diagnostics_folder: Path | None = None
    agents: AgentStore | None = None  # the group chat's agents (AGENT.md folders)
    usage: UsageLedger | None = None  # what each conversation's calls used and cost
    rules: RuleStore | None = None  # the person's "always allow" answers
    members: Members | None = None  # a conversation's members and floor (team/conversations.py)
    models: Callable[[], tuple[list[str], str | None]] | None = None  # the switcher's choices, the default
    mirror: MirrorControl | None = None  # the phone mirror: on/off, pairing, devices
    skills: SkillRegistry | None = None  # every skill root, scanned and watched
    packages: Packages | None = None  # external packages (skills and commands)
    evolution: Evolution | None = None  # self-evolution: status, history, undo
    connectors: ConnectorHub | None = None  # the person's MCP servers: status, add, remove, retry
    # Providers set by environment variables (ANTHROPIC_API_KEY, …) that the settings do not name: they work,
    # so Settings → Providers shows them (it said "No provider yet" while one answered).
    environment: tuple[dict[str, str], ...] = ()
    instructions: Instructions | None = None  # a chat's instruction files and the person's trust in its folder
    home: Path | None = None  # where the person's other agents keep their own instructions
    loop: LoopWatch | None = None  # how long the event loop was held (GET /api/status/loop)
    updates: Callable[[], Updater] | None = None  # made on first use: nothing of it loads at start
    restart: Callable[[], None] | None = None  # how the app closes itself to start an installed update
    schedules: ScheduleStore | None = None  # the conversations' schedules (Settings → Schedules)
    schedules_changed: Callable[[], None] = lambda: None  # the scheduler looks again now

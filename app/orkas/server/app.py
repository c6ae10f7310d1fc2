"""The local API: the UI's files, /api/status, and the routers by resource — conversations
(conversation_routes.py), settings (settings_routes.py), memory and the knowledge base
(memory_routes.py), crash reports and diagnostics (diagnostics_routes.py). Every route sits behind
`LocalOnly` (security.py), and `Observed` (observe.py) logs each request and keeps crash reports."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from orkas import __version__
from orkas.adapter.connectors.hub import ConnectorHub
from orkas.adapter.conversations.attachments import AttachmentStore
from orkas.adapter.conversations.runtime import ConversationRuntime
from orkas.adapter.knowledge.service import KnowledgeService
from orkas.adapter.learning.evolution import Evolution
from orkas.adapter.packages.store import Packages
from orkas.adapter.settings.permission_rules import RuleStore
from orkas.adapter.settings.store import SettingsStore
from orkas.adapter.settings.usage import UsageLedger
from orkas.adapter.settings.vault import Vault
from orkas.adapter.skills.roots import SkillRegistry
from orkas.core.crashes import CrashReports
from orkas.core.resources import frontend_dir
from orkas.engine.memory import Memory
from orkas.engine.sandbox.executor import confinement
from orkas.server.agents_routes import Members, add_agents_routes
from orkas.server.connector_routes import add_connector_routes
from orkas.server.conversation_routes import add_conversation_routes
from orkas.server.diagnostics_routes import add_diagnostics_routes
from orkas.server.learning_routes import add_learning_routes
from orkas.server.mirror.routes import MirrorControl, add_mirror_routes
from orkas.server.observe import Observed
from orkas.server.security import LocalOnly
from orkas.server.settings_routes import add_settings_routes
from orkas.server.skills_routes import add_package_routes, add_skills_routes
from orkas.team.agents import AgentStore

FRONTEND = frontend_dir()
NO_STORE = {"Cache-Control": "no-store"}


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


def create_app(
    *,
    token: str,
    port: int,
    runtime: ConversationRuntime,
    providers: list[str] | Callable[[], list[str]],
    services: Services | None = None,
) -> Observed:
    """`providers`: the configured providers' names, or how to read them (they change while the app runs)."""
    api = FastAPI(title="Orkas", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)

    if services is not None and services.frontend.is_dir():
        frontend = services.frontend
        api.mount("/static", StaticFiles(directory=frontend), name="static")

        @api.get("/")
        async def page() -> FileResponse:
            return FileResponse(frontend / "index.html", headers=NO_STORE)

    @api.get("/api/status")
    async def status() -> dict[str, Any]:
        sandbox = services.sandbox() if services is not None and services.sandbox is not None else None
        names = providers() if callable(providers) else providers
        return {"version": __version__, "providers": names, "sandbox": sandbox or {"kind": confinement()}}

    add_conversation_routes(api, runtime, services)
    if services is not None and services.mirror is not None:
        add_mirror_routes(api, services.mirror)
    if services is not None:
        add_settings_routes(api, services)
    if services is not None and services.agents is not None:
        add_agents_routes(api, services.agents, services.members)
    if services is not None and services.skills is not None:
        add_skills_routes(api, services.skills)
        if services.packages is not None:
            add_package_routes(api, services.packages, services.skills)
    if services is not None and services.evolution is not None:
        add_learning_routes(api, services.evolution)
    if services is not None and services.connectors is not None:
        add_connector_routes(api, services.connectors)
    if services is not None and services.crashes is not None:
        folder = services.diagnostics_folder or services.crashes.folder.parent / "diagnostics"
        add_diagnostics_routes(api, services.crashes, services.diagnostics, folder)
    return Observed(LocalOnly(api, token=token, port=port), crashes=services.crashes if services else None)

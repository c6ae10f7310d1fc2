"""The local API: the UI's files, /api/status, and the routers by resource — conversations
(conversation_routes.py), settings (settings_routes.py), memory and the knowledge base
(memory_routes.py), instruction files and folder trust (instructions_routes.py), crash reports and diagnostics
(diagnostics_routes.py). Every route sits behind `LocalOnly` (security.py), and `Observed` (observe.py) logs each
request and keeps crash reports."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.responses import FileResponse
from starlette.staticfiles import StaticFiles

from orkas import __version__
from orkas.adapter.conversations.runtime import ConversationRuntime
from orkas.core.errors import ConfigError
from orkas.engine.sandbox.executor import confinement
from orkas.server.agents_routes import add_agents_routes
from orkas.server.connector_offer_routes import add_connector_offer_routes
from orkas.server.connector_routes import add_connector_routes
from orkas.server.conversation_routes import add_conversation_routes
from orkas.server.diagnostics_routes import add_diagnostics_routes
from orkas.server.instructions_routes import add_instructions_routes
from orkas.server.learning_routes import add_learning_routes
from orkas.server.mirror.routes import add_mirror_routes
from orkas.server.observe import Observed
from orkas.server.rewind_routes import add_rewind_routes
from orkas.server.routing import Api
from orkas.server.schedule_routes import add_schedule_routes
from orkas.server.security import LocalOnly
from orkas.server.services import Services
from orkas.server.settings_routes import add_settings_routes
from orkas.server.skills_routes import add_package_routes, add_skills_routes
from orkas.server.update_routes import add_update_routes

NO_STORE = {"Cache-Control": "no-store"}


def create_app(
    *,
    token: str,
    port: int,
    runtime: ConversationRuntime,
    providers: list[str] | Callable[[], list[str]],
    services: Services | None = None,
) -> Observed:
    """`providers`: the configured providers' names, or how to read them (they change while the app runs)."""
    api = Api()

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

    @api.get("/api/status/loop")
    async def loop_status() -> dict[str, Any]:
        """How late the event loop woke since start (or since the last reset): a freeze, measured."""
        watch = services.loop if services is not None else None
        return watch.summary() if watch is not None else {"samples": 0}

    @api.post("/api/status/loop/reset")
    async def loop_reset() -> dict[str, bool]:
        if services is not None and services.loop is not None:
            services.loop.reset()
        return {"reset": True}

    add_conversation_routes(api, runtime, services)
    add_rewind_routes(api, runtime)
    if services is not None and services.mirror is not None:
        add_mirror_routes(api, services.mirror)
    if services is not None:
        add_settings_routes(api, services, runtime.store.recent)
    if services is not None and services.agents is not None:
        add_agents_routes(api, services.agents, services.members, runtime)
    if services is not None and services.skills is not None:
        add_skills_routes(api, services.skills)
        if services.packages is not None:
            add_package_routes(api, services.packages, services.skills)
    if services is not None and services.evolution is not None:
        add_learning_routes(api, services.evolution)
    if services is not None and services.connectors is not None:
        add_connector_routes(api, services.connectors)
        add_connector_offer_routes(api, services.connectors, runtime, services)
    if services is not None and services.instructions is not None and services.home is not None:
        add_instructions_routes(api, services.instructions, runtime.store, services.settings, services.home)
    if services is not None and services.crashes is not None:
        folder = services.diagnostics_folder or services.crashes.folder.parent / "diagnostics"
        add_diagnostics_routes(api, services.crashes, services.diagnostics, folder)
    if services is not None and services.updates is not None:
        add_update_routes(api, services, services.updates)
    if services is not None and services.schedules is not None:
        add_schedule_routes(api, services.schedules, runtime.store.recent, _exists(runtime), services.schedules_changed)
    return Observed(LocalOnly(api, token=token, port=port), crashes=services.crashes if services else None)


def _exists(runtime: ConversationRuntime) -> Callable[[str], bool]:
    def exists(conversation_id: str) -> bool:
        try:
            runtime.store.get(conversation_id)
        except ConfigError:
            return False
        return True

    return exists

"""What extends an agent beyond its workspace: skills from every root, installed packages, and connectors."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orkas.adapter.settings.vault import Vault
from orkas.app.config import Configured, Settings, protected_data
from orkas.app.workspace import sandbox
from orkas.engine.sandbox import PathDenied, PathPolicy
from orkas.engine.sandbox.limits import Limits
from orkas.engine.tools.base import Tool

CONNECTORS_FILE = "connectors.json"

if TYPE_CHECKING:  # numpy and faiss, the sandbox's executor: loaded where they are used, not at start
    from orkas.adapter.connectors.config import Connectors
    from orkas.adapter.connectors.hub import ConnectorHub
    from orkas.adapter.packages.store import Packages
    from orkas.adapter.skills.roots import SkillRegistry
    from orkas.engine.sandbox.executor import Executor
    from orkas.engine.skills import Catalog
    from orkas.engine.skills.tools import Save


@dataclass(frozen=True, slots=True)
class Skills:
    """The skills one actor may use, once scanned: its catalogue and the folders its commands may read them from."""

    catalog: Catalog
    readable: Sequence[Path] = ()


class SkillAccess:
    """What one actor may use of the skills: the catalogue and its folders (`resolve`, scanned when first asked —
    by the first turn's prompt, after the run has said it started, not while the agent is built: issue 38), and
    for the commander the way to save a new custom skill (skill_save) and install packages (package_install)."""

    def __init__(
        self,
        resolve: Callable[[], Skills],
        save: Save | None = None,
        exists: Callable[[str], bool] = lambda _name: False,
        tools: Sequence[Tool] = (),
    ) -> None:
        self._resolve = resolve
        self._resolved: Skills | None = None
        self.save = save
        self.exists = exists
        self.tools = tools

    def resolved(self) -> Skills:
        if self._resolved is None:
            self._resolved = self._resolve()
        return self._resolved

    @property
    def catalog(self) -> Catalog:
        return self.resolved().catalog

    @property
    def readable(self) -> Sequence[Path]:
        return self.resolved().readable


def skill_registry(
    settings: Settings,
    agents: Callable[[], Sequence[str]] | None = None,
    *,
    background: bool = True,
    scan: bool = True,
) -> SkillRegistry:
    """Every skill root of this install, scanned once (the server's watcher keeps it current). With
    `background`, skills from outside not judged before are judged on a thread (listed as checking until
    then); without, the scan waits for the guard (the CLI's one-shot commands)."""
    from orkas.adapter.skills.guard import SkillGuard
    from orkas.adapter.skills.records import Root
    from orkas.adapter.skills.roots import SkillRegistry
    from orkas.core.resources import bundled_skills

    def agent_names() -> Sequence[str]:
        folder = settings.data_dir / "agents"
        return [p.name for p in folder.iterdir() if p.is_dir()] if folder.is_dir() else []

    guard = SkillGuard(settings.data_dir / "cache" / "skill-guard.json", background=background)
    packages = package_store(settings)

    def package_roots() -> list[Root]:
        return [
            Root("package", folder, f"package {name}", single=single) for name, folder, single in packages.skill_roots()
        ]

    registry = SkillRegistry(
        settings.data_dir,
        home=Path.home(),
        bundled=bundled_skills(),
        packages=package_roots,
        agents=agents or agent_names,
        protected=lambda: protected_data(settings.data_dir),
        guard=guard,
    )
    guard.on_judged = registry.refresh
    registry.packages = packages
    if scan:
        registry.refresh()
    return registry


def package_store(settings: Settings) -> Packages:
    """The installed packages; git and dependency installs run through the one executor, rooted at the
    packages folder (the person's explicit install is what lets them use the network)."""
    from orkas.adapter.packages.store import Packages

    def executor_for(folder: Path, readable: list[Path]) -> Executor:
        folder.mkdir(parents=True, exist_ok=True)
        protected = [p for p in protected_data(settings.data_dir) if p != folder]  # the rest of the data stays hidden
        policy = PathPolicy(folder, protected=protected, own=[folder], readable=readable)
        return sandbox(settings, policy, Limits(max_timeout=900.0))

    return Packages(settings.data_dir, executor_for, lambda: protected_data(settings.data_dir), settings.ssh_agent)


def skill_access(registry: SkillRegistry, agent: str | None, allowed: Sequence[str] | None = None) -> SkillAccess:
    """What `agent` (None: the commander) may use of the registry's skills — scanned when first used — with
    installed packages' commands (read-only) when there are any."""

    def resolve() -> Skills:
        registry.ensure()
        catalog = registry.catalog(agent, allowed=allowed)
        packages = registry.data / "packages"
        folders = registry.folders_for(catalog)
        if (packages / ".bin").is_dir() and any((packages / ".bin").iterdir()):
            folders = [f for f in folders if packages not in f.parents] + [packages]
        return Skills(catalog, folders)

    if agent is not None:
        return SkillAccess(resolve)

    def save(name: str, description: str, body: str, files: Mapping[str, str]) -> Path:
        from orkas.adapter.skills.custom import save_custom

        folder = save_custom(registry.custom, name, description, body, files)
        registry.refresh()
        return folder

    installer: list[Tool] = []
    if registry.packages is not None:
        from orkas.adapter.packages.tool import PackageInstall

        installer.append(PackageInstall(registry.packages, registry.refresh))
    return SkillAccess(resolve, save, lambda name: bool(registry.find(name)), tools=installer)


class Connections:
    """The person's MCP servers as an agent is given them. Whether any is on is read from their file — the hub (its
    links, sign-ins, the SDK) is made only when one is, or when first used: a run with none set up never loads it
    (issue 38). `settings()` is what add_connector writes."""

    def __init__(self, data_dir: Path, hub: Callable[[], ConnectorHub]) -> None:
        self.path = data_dir / CONNECTORS_FILE
        self._hub = hub

    def any_enabled(self) -> bool:
        return self.path.exists() and self.hub().any_enabled()

    def hub(self) -> ConnectorHub:
        return self._hub()

    def settings(self) -> Connectors:
        return self.hub().connectors


def connector_hub(settings: Settings, configured: Configured | None = None) -> ConnectorHub:
    """The person's MCP servers. A local one starts through a workspace executor rooted at its `cwd` (or a folder
    of its own in the data), with the folders the person named granted — the one way processes start — confined
    unless the person chose otherwise. Its secrets come from the vault when it connects."""
    from orkas import __version__
    from orkas.adapter.connectors.config import Connector, Connectors, command_folders
    from orkas.adapter.connectors.health import HealthFile
    from orkas.adapter.connectors.hub import ConnectorHub

    # The vault as the CLI writes it, even when it did not exist when the app started (a header added later).
    vault = (configured.vault if configured is not None else None) or Vault.at(settings.data_dir)

    def executor_for(connector: Connector) -> Executor:
        folder = Path(connector.cwd) if connector.cwd else settings.data_dir / "connectors" / connector.id
        folder.mkdir(parents=True, exist_ok=True)
        own = [] if connector.cwd else [folder]
        policy = PathPolicy(folder, granted=connector.folders, protected=protected_data(settings.data_dir), own=own)
        for needed in command_folders(connector.command, policy.home) if connector.confined else ():
            with contextlib.suppress(PathDenied):  # never the home or a credential folder: it says why it failed
                policy.add_readable(needed)
        return sandbox(settings, policy)

    return ConnectorHub(
        Connectors(settings.data_dir / CONNECTORS_FILE, vault),
        HealthFile(settings.data_dir / "connector-health.json", base=settings.mcp_backoff),
        executor_for=executor_for,
        logs=settings.data_dir / "logs" / "connectors",
        version=__version__,
    )

"""A workspace's tools and the one executor every command of it goes through, and the folders an agent may use."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from orkas.app.config import Configured, Settings, load_configured, protected_data
from orkas.core.errors import ConfigError
from orkas.engine.sandbox import PathDenied, PathPolicy
from orkas.engine.sandbox.limits import Limits

if TYPE_CHECKING:  # the tools' and the executor's modules load when an agent's tools are first made, not at start
    from orkas.engine.sandbox.executor import ConfinementReport, Executor
    from orkas.engine.tools.base import Tool
    from orkas.engine.tools.processes import ProcessManager


log = logging.getLogger(__name__)


def sandbox(settings: Settings, policy: PathPolicy, limits: Limits | None = None) -> Executor:
    """The one executor of a workspace: the toolchains it may use, the person's git identity (their name and
    e-mail only), its caches, and — when the policy lets it read them — installed packages' commands at the end
    of an approved command's PATH, with each package's own environment for approved commands run inside it."""
    from orkas.engine.sandbox.confine import git_identity, toolchain_dirs
    from orkas.engine.sandbox.executor import Executor

    gitconfig = git_identity(policy.home / ".gitconfig") or git_identity(policy.home / ".config" / "git" / "config")
    packages_dir = (settings.data_dir / "packages").resolve()
    shims = packages_dir / ".bin"
    executor = Executor(
        policy,
        spill_dir=settings.data_dir / "outputs",
        sandbox_dir=settings.data_dir / "sandbox",
        confine=settings.confine,
        limits=limits,
        base_env=settings.process_env,
        toolchains=toolchain_dirs(policy.home, settings.process_env.get("PATH", ""), policy.secrets),
        home_files={".gitconfig": gitconfig} if gitconfig else {},
        # Offered always, used while the policy can read them: an agent's skills (the packages among them) are made
        # readable when its first turn's prompt is built, after the executor is.
        path_suffix=[shims],
        prefer=preferred_bins(packages_dir),
    )
    in_force = (executor.confined, executor.pids.pids_method, executor.pids.memory_method)
    if in_force not in _confinement_logged:  # once per process and kind, not once per turn
        _confinement_logged.add(in_force)
        log.info("commands run confined by %s; processes capped by %s, memory by %s", *in_force)
    return executor


_confinement_logged: set[tuple[str, str, str]] = set()


def confinement_report(settings: Settings, configured: Configured | None = None) -> ConfinementReport:
    """What confinement commands get here, in words (orkas status, the settings screen)."""
    from orkas.engine.sandbox.executor import confinement, describe_confinement
    from orkas.engine.sandbox.limits import ProcessLimiter

    configured = configured or load_configured(settings)
    limits = Limits(max_timeout=float(configured.product.preferences.command_timeout))
    kind = confinement() if settings.confine else "none"
    limiter = ProcessLimiter(limits, user_namespace=kind == "bubblewrap")
    return describe_confinement(kind, limits, limiter.pids_method, limiter.memory_method, limiter.memory_total)


def preferred_bins(packages: Path) -> dict[Path, list[Path]]:
    """Each package's own environment (its .venv, its node_modules), for commands run inside it."""
    if not packages.is_dir():
        return {}
    prefer: dict[Path, list[Path]] = {}
    for root in packages.iterdir():
        bins = [b for b in (root / ".venv" / "bin", root / "node_modules" / ".bin") if b.is_dir()]
        if bins and not root.name.startswith("."):
            prefer[root] = bins
    return prefer


def workspace_tools(
    settings: Settings, policy: PathPolicy, limits: Limits | None = None, processes: ProcessManager | None = None
) -> tuple[list[Tool], ProcessManager]:
    """The full tool set bound to one workspace, every process going through one executor. `processes`
    is the conversation's own manager (it outlives the turn); without one, the tools get a new one."""
    from orkas.engine.tools.edits import DeleteFile, EditFile, WriteFile
    from orkas.engine.tools.files import GrepFiles, ListFiles, ReadFile, SearchFiles, StatFile
    from orkas.engine.tools.processes import ProcessManager
    from orkas.engine.tools.shell import Bash, ProcessRead, ProcessStart, ProcessStatus, ProcessStop
    from orkas.engine.tools.web import WebFetch, WebSearch

    executor = sandbox(settings, policy, limits)
    if processes is None:
        processes = ProcessManager(executor, settings.data_dir / "processes")
    processes.bind(executor)
    tools: list[Tool] = [
        ReadFile(policy),
        StatFile(policy),
        ListFiles(policy),
        SearchFiles(policy),
        GrepFiles(policy),
        WriteFile(policy),
        EditFile(policy),
        DeleteFile(policy),
        Bash(executor),
        ProcessStart(processes),
        ProcessStatus(processes),
        ProcessRead(processes),
        ProcessStop(processes),
        WebFetch(approved_hosts=[settings.search.host] if settings.search else ()),
        WebSearch(settings.search),
    ]
    return tools, processes


def agent_policy(
    settings: Settings,
    workspace: Path,
    granted: Sequence[str | Path],
    own: Sequence[Path],
    readable: Sequence[Path] = (),
) -> PathPolicy:
    """The folders an agent may use: its workspace, what the conversation granted, its skills' folders (`readable`)
    read-only."""
    try:
        return PathPolicy(
            workspace,
            granted=granted,
            protected=protected_data(settings.data_dir),
            own=own,
            readable=readable,
        )
    except PathDenied as e:
        raise ConfigError(f"workspace {str(workspace)!r} cannot be used: {e.reason}") from e

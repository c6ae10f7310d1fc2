"""Composition root: reads configuration once and wires the engine, the adapters and the team.

    config.py      settings, the vault, providers and their registry, the embedder, the app's own short calls
    workspace.py   a workspace's tools and its one executor; the folders an agent may use
    extensions.py  skills from every root, installed packages, connectors
    agents.py      an agent from its profile (Orkas's own, or an external CLI); worktrees, past conversations, evolution
    assembly.py    the one assembly every entry point drives: who runs each part of a conversation, with what

Callers import from `orkas.app`; the parts stay free to move between these modules.
"""

from __future__ import annotations

from orkas.app.agents import (
    AgentProfile,
    GitWorktrees,
    RunLimits,
    build_agent,
    conversation_messages,
    evolution_for,
    external_member,
    reranker,
)
from orkas.app.config import (
    ENV_KEYS,
    KEYLESS,
    KNOWN_DATA,
    TITLE_PROMPT,
    Configured,
    Settings,
    build_registry,
    chains,
    check_provider,
    embedder_for,
    environment_providers,
    load_configured,
    model_choices,
    protected_data,
    settings_from_env,
    spec_for,
    suggest_title,
    title_text,
    updater_for,
)
from orkas.app.extensions import SkillAccess, connector_hub, package_store, skill_access, skill_registry
from orkas.app.workspace import agent_policy, confinement_report, preferred_bins, sandbox, workspace_tools

__all__ = [
    "ENV_KEYS",
    "KEYLESS",
    "KNOWN_DATA",
    "TITLE_PROMPT",
    "AgentProfile",
    "Configured",
    "GitWorktrees",
    "RunLimits",
    "Settings",
    "SkillAccess",
    "agent_policy",
    "build_agent",
    "build_registry",
    "chains",
    "check_provider",
    "confinement_report",
    "connector_hub",
    "conversation_messages",
    "embedder_for",
    "environment_providers",
    "evolution_for",
    "external_member",
    "load_configured",
    "model_choices",
    "package_store",
    "preferred_bins",
    "protected_data",
    "reranker",
    "sandbox",
    "settings_from_env",
    "skill_access",
    "skill_registry",
    "spec_for",
    "suggest_title",
    "title_text",
    "updater_for",
    "workspace_tools",
]

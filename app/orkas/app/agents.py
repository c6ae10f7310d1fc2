"""Agents, assembled: Orkas's own (build_agent) and external CLIs as group members, with what they share — the
knowledge base's second stage, git worktrees, past conversations, and self-evolution."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orkas.app.config import Configured, Settings, build_registry, load_configured, model_choices, protected_data
from orkas.app.extensions import Connections, SkillAccess
from orkas.app.workspace import agent_policy, sandbox, workspace_tools
from orkas.core.errors import ConfigError, NoProvider
from orkas.engine.catalog import lookup
from orkas.engine.hooks import ALL_EVENTS, Event
from orkas.engine.instructions import ProjectInstructions
from orkas.engine.memory import Memory, MemoryTool
from orkas.engine.prompt import SystemPrompt
from orkas.engine.providers.base import Reasoning
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.retry import RetryPolicy
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.sandbox import PathDenied, PathPolicy
from orkas.engine.sandbox.limits import Limits
from orkas.engine.tools.base import Tool
from orkas.engine.tools.nearby import with_nearby

# Loaded where they are used, not at start: numpy and faiss with a knowledge base or an embedder, the tools' and
# the executor's modules when the first turn's tools are made.
if TYPE_CHECKING:
    from orkas.adapter.agents.external import ExternalAgent
    from orkas.adapter.hooks.commands import CommandHooks, HookSet
    from orkas.adapter.learning.evolution import Evolution
    from orkas.engine.memory.kb import KnowledgeBase
    from orkas.engine.memory.rerank import ModelReranker
    from orkas.engine.sandbox.executor import Executor
    from orkas.engine.tools.processes import ProcessManager
    from orkas.team.agents import AgentSpec


log = logging.getLogger(__name__)


def reranker(registry: ProviderRegistry, configured: Configured, chat_model: str) -> ModelReranker | None:
    """The knowledge base's second stage, when the person turned it on (Settings → Knowledge). Raises
    `ConfigError` when the model it names cannot be reached, before anything runs."""
    choice = configured.product.preferences.rerank
    if choice == "off":
        return None
    from orkas.engine.memory.rerank import ModelReranker

    try:
        provider, model_id = registry.resolve(chat_model if choice == "chat" else choice)
    except ConfigError as e:
        raise ConfigError(f"reranking knowledge-base results: {e} (Settings → Knowledge, or set it off)") from e
    return ModelReranker(provider, model_id)


@dataclass(frozen=True, slots=True)
class RunLimits:
    """How far one run may go: tool rounds, retries of a failed model call, and a context window to assume
    (None: the model's own)."""

    max_tool_loops: int = 100
    retries: int = 3
    context_window: int | None = None


@dataclass(frozen=True, slots=True)
class AgentProfile:
    """Everything one agent is given, in one typed place (assembly.py fills it for every role). A group's
    actors add their own tools (`extra_tools`), keep to an allow-list (`only_tools`) and get their
    instructions (`note`); a named agent (`learned`: its name, the commander's is "commander") gets its
    self-understanding memo pinned; the knowledge openers are called on first search."""

    workspace: Path
    model: str | None = None
    limits: RunLimits = field(default_factory=RunLimits)
    configured: Configured | None = None
    temperature: float | None = None
    reasoning: Reasoning = "off"
    granted: Sequence[str | Path] = ()
    own: Sequence[Path] = ()
    knowledge: KnowledgeBase | Callable[[], KnowledgeBase] | None = None
    past_conversations: KnowledgeBase | Callable[[], KnowledgeBase] | None = None
    processes: ProcessManager | None = None
    extra_tools: Sequence[Tool] = ()
    only_tools: Sequence[str] | None = None
    note: str = ""
    memory_tool: bool = True
    skills: SkillAccess | None = None
    learned: str | None = None
    connectors: Connections | None = None
    personal: str | None = None  # the person's own standing instructions (adapter/settings/personal.py)
    project: ProjectInstructions | None = None  # the conversation's AGENTS.md and kin, trusted or only read
    hooks: HookSet | None = None  # the person's checks around tool use (and a trusted project's)
    hook_events: frozenset[Event] = ALL_EVENTS  # which of them this agent fires (a member: the tool events)


def build_agent(settings: Settings, profile: AgentProfile) -> Agent:
    """Orkas's own agent as the profile says. Raises `ConfigError` when no provider or model can serve the run."""
    configured = profile.configured or Configured()
    chosen = _model(settings, configured, profile.model)
    if not profile.workspace.is_dir():
        raise ConfigError(f"workspace {str(profile.workspace)!r} is not a folder")
    registry = build_registry(settings, configured)
    registry.resolve(chosen)  # fail before anything runs
    policy = agent_policy(settings, profile.workspace, profile.granted, profile.own)
    limits = Limits(max_timeout=float(configured.product.preferences.command_timeout))
    memory = Memory.in_folder(settings.data_dir / "memory")
    remembers = profile.memory_tool and configured.product.preferences.memory  # off until the person turns it on
    second_stage = reranker(registry, configured, chosen) if profile.knowledge is not None else None

    made_with: list[Executor] = []  # the one executor the tools were made with: the hooks run through it too

    def tools() -> list[Tool]:
        made, processes = workspace_tools(settings, policy, limits, profile.processes)
        made_with.append(processes.executor)
        if remembers:
            made.append(MemoryTool(memory))
        made = _allowed_tools(profile, [*made, *_capability_tools(profile, second_stage)])
        return with_nearby(made, profile.project) if profile.project is not None else made

    hooks: tuple[Callable[[], str | None], ...] = (memory.prompt_section,) if remembers else ()
    if profile.skills is not None:
        window = profile.limits.context_window or lookup(chosen).context_window
        hooks = (*hooks, _skill_index(profile.skills, policy, window))
    if profile.learned is not None:  # what this agent's reflections taught it (engine/evolution/memo.py), each turn
        hooks = (*hooks, _learned(settings.data_dir / "learned" / profile.learned / "memo"))
    # An agent's own prompt (and the chat's instructions) first, then the person's standing instructions, then the
    # project's files — read at every turn, so an edit or a trust given applies from the next one.
    first: tuple[Callable[[], str | None], ...] = tuple(
        _said(text) for text in (profile.note, profile.personal) if text
    )
    if profile.project is not None:
        first = (*first, profile.project.section)
    hooks = (*first, *hooks)
    return Agent(
        providers=registry,
        config=RunConfig(
            model=chosen,
            max_tool_loops=profile.limits.max_tool_loops,
            retry=RetryPolicy(max_retries=profile.limits.retries),
            context_window=profile.limits.context_window,
            temperature=profile.temperature,
            reasoning=profile.reasoning,
        ),
        workspace=policy.workspace,
        # Made when the first turn starts, after run_start (their modules and the executor's probes are not on the
        # start path); an allow-list is checked now, so a tool name that is none is said before anything runs.
        tools=tools() if profile.only_tools is not None else tools,
        system_prompt=SystemPrompt(hooks=hooks),  # read at the start of every turn
        hooks=_hooks(profile, lambda: made_with[0]),
    )


def _hooks(profile: AgentProfile, executor: Callable[[], Executor]) -> CommandHooks | None:
    """The agent's hooks, when any file configures one (their module loads only then)."""
    if profile.hooks is None or not (profile.hooks.commands or profile.hooks.problems):
        return None
    from orkas.adapter.hooks.commands import CommandHooks

    return CommandHooks(profile.hooks, executor, profile.hook_events)


def _learned(folder: Path) -> Callable[[], str | None]:
    """The memo's prompt section, read as each turn's prompt is built (learning's modules load then, after the run
    has said it started)."""

    def section() -> str | None:
        from orkas.engine.evolution.memo import Memo

        return Memo(folder).prompt_section()

    return section


def _said(text: str) -> Callable[[], str | None]:
    return lambda: text


def _readable(skills: SkillAccess | None) -> Sequence[Path]:
    return skills.readable if skills is not None else ()


def _skill_index(skills: SkillAccess, policy: PathPolicy, window: int) -> Callable[[], str | None]:
    """The prompt's skill index, made when the first turn's prompt is built (the skills scanned then, after the run
    has said it started) and kept for the agent's life — one turn — so the prompt stays byte-stable within it. The
    skills' folders become readable for the agent's commands at the same moment, before any tool can run."""
    made: list[str | None] = []

    def index() -> str | None:
        if not made:
            for folder in skills.readable:
                try:
                    policy.add_readable(folder)
                except PathDenied as e:  # a root the person pointed at a protected place: its skills stay unread
                    log.warning("skill folder %s is not readable by commands: %s", folder, e.reason)
            made.append(skills.catalog.index(window) if len(skills.catalog) else None)
        return made[0]

    return index


def _model(settings: Settings, configured: Configured, model: str | None) -> str:
    entries = configured.product.entries
    if not settings.providers and not entries:
        raise NoProvider(
            "no model provider is configured: run `orkas providers add NAME --kind anthropic --key …`, "
            "or set ANTHROPIC_API_KEY / OPENAI_API_KEY (OPENAI_BASE_URL / OLLAMA_BASE_URL for a local server)"
        )
    first_entry = f"{entries[0].provider}/{entries[0].model}" if entries else None
    preferred = configured.product.preferences.default_model
    chosen = model or settings.model_override or preferred or first_entry or settings.default_model
    if not chosen:
        raise ConfigError("no model given: pass --model provider/model or set ORKAS_MODEL")
    return chosen


def _capability_tools(profile: AgentProfile, second_stage: ModelReranker | None) -> list[Tool]:
    """The tools beyond the workspace's: knowledge, skills, connectors, the team's; then the allow-list."""
    tools: list[Tool] = []
    knowledge, past, skills, connectors = (
        profile.knowledge,
        profile.past_conversations,
        profile.skills,
        profile.connectors,
    )
    if knowledge is not None or past is not None:
        from orkas.engine.memory.kb_tools import ChatSearch, KbList, KbRead, KbSearch
    if knowledge is not None:
        tools += [KbSearch(knowledge, second_stage), KbRead(knowledge), KbList(knowledge)]
    if past is not None:
        tools.append(ChatSearch(past))
    if skills is not None:
        from orkas.engine.skills import SkillRead, SkillSave, SkillSearch

        tools += [SkillSearch(lambda: skills.catalog), SkillRead(lambda: skills.catalog)]
        if skills.save is not None:
            tools.append(SkillSave(skills.save, skills.exists))
        tools += list(skills.tools)
    if connectors is not None and connectors.any_enabled():  # no server set up: no tools for them in the prompt
        from orkas.engine.tools.connectors import connector_tools

        tools += connector_tools(connectors.hub())
    if connectors is not None and profile.learned == "commander":  # the agent the person talks to may propose one
        from orkas.adapter.connectors.tool import AddConnector

        tools.append(AddConnector(connectors.settings))
    return tools + list(profile.extra_tools)


def _allowed_tools(profile: AgentProfile, tools: list[Tool]) -> list[Tool]:
    """A named agent's allow-list (`tools:` in its AGENT.md), with what its role always has: the team's tools
    and reading its skills. A name that is no tool is a `ConfigError`."""
    if profile.only_tools is None:
        return tools
    unknown = sorted(set(profile.only_tools) - {t.name for t in tools})
    if unknown:
        raise ConfigError(f"unknown tools {', '.join(unknown)}; tools: {', '.join(sorted(t.name for t in tools))}")
    kept = set(profile.only_tools) | {e.name for e in profile.extra_tools} | {"skill_search", "skill_read"}
    return [t for t in tools if t.name in kept]


def external_member(settings: Settings, spec: AgentSpec, profile: AgentProfile) -> ExternalAgent:
    """A member run by an external agent CLI (`backend:` in its AGENT.md), with the bridge back to Orkas: the
    skills it may use, the knowledge base, past chats, the person's connectors, and the hand-back."""
    from orkas.adapter.agents.bridge import CAPABILITIES, BridgeGrants
    from orkas.adapter.agents.bridge_tools import BridgeParts, handlers
    from orkas.adapter.agents.external import BACKENDS, ExternalAgent
    from orkas.engine.memory.kb_tools import ChatSearch, KbList, KbRead, KbSearch
    from orkas.engine.tools.shell import Bash

    backend = next(b for b in BACKENDS if b == spec.backend)
    knowledge, past_conversations, skills = profile.knowledge, profile.past_conversations, profile.skills
    policy = agent_policy(settings, profile.workspace, profile.granted, profile.own, _readable(skills))
    executor = sandbox(settings, policy)
    parts = BridgeParts(
        workspace=policy.workspace,
        catalog=skills.catalog if skills is not None else None,
        bash=Bash(executor),
        knowledge=[KbSearch(knowledge), KbRead(knowledge), KbList(knowledge)] if knowledge is not None else (),
        chat_search=ChatSearch(past_conversations) if past_conversations is not None else None,
        read_conversation=lambda ident: conversation_messages(settings, ident),
        connectors=profile.connectors.hub() if profile.connectors is not None else None,
        grants=BridgeGrants(settings.data_dir / "bridge-permissions.json"),
    )
    return ExternalAgent(
        name=spec.name,
        backend=backend,
        cli=spec.cli,
        workspace=policy.workspace,
        executor=executor,
        logs=settings.data_dir / "logs" / "agents",
        handlers=lambda tools: handlers(tools, parts),
        capabilities=spec.bridge if spec.bridge is not None else tuple(CAPABILITIES),
    )


class GitWorktrees:
    """Agents marked `worktree: true` write in their own git worktree — `<workspace>/.orkas/worktrees/<name>`
    on a branch `orkas/<name>` — so parallel writers never collide, and the commander is shown the diff.
    Every git command goes through the workspace's sandbox executor, as all processes do; `.orkas/` is
    added to the repository's local exclude file, so the worktrees never show as untracked files."""

    MAX_DIFF = 8000  # characters of diff the commander is shown

    def __init__(self, settings: Settings, workspace: Path) -> None:
        self.settings = settings
        self.workspace = workspace

    def _executor(self) -> Executor:
        return sandbox(self.settings, PathPolicy(self.workspace, protected=protected_data(self.settings.data_dir)))

    async def prepare(self, agent: str) -> Path | None:
        executor = self._executor()
        inside = await executor.run("git rev-parse --is-inside-work-tree", cwd=self.workspace, timeout=30)
        if inside.exit_code != 0 or "true" not in inside.output:
            return None
        target = self.workspace / ".orkas" / "worktrees" / agent
        if (target / ".git").exists():
            return target
        made = await executor.run(
            'exclude="$(git rev-parse --git-path info/exclude)" && mkdir -p "$(dirname "$exclude")" && '
            '(grep -qx ".orkas/" "$exclude" 2>/dev/null || echo ".orkas/" >> "$exclude") && '
            f"git worktree add -q -B orkas/{agent} .orkas/worktrees/{agent} HEAD",
            cwd=self.workspace,
            timeout=120,
            writable=True,  # Orkas's own step for an agent the person set up to write in its worktree
        )
        if made.exit_code != 0:
            log.warning("no worktree for %s: git said %s", agent, made.output[-500:])
            return None
        return target

    async def diff(self, worktree: Path) -> str:
        shown = await self._executor().run(
            "git add -A -N . && git diff HEAD --stat && git diff HEAD", cwd=worktree, timeout=60, writable=True
        )
        text = shown.output.strip() or "(no changes)"
        return text if len(text) <= self.MAX_DIFF else text[: self.MAX_DIFF] + "\n[diff cut here]"


def conversation_messages(settings: Settings, conversation_id: str) -> tuple[str, list[Any]]:
    """(title, messages) of a conversation wherever it lives: the app's chats, group chats, `orkas run` sessions.
    Empty when it is gone (deleted since its runs were counted)."""
    from orkas.adapter.conversations.sessions import SessionStore
    from orkas.adapter.conversations.store import ConversationStore
    from orkas.core.errors import NotFound as Missing
    from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage
    from orkas.team.bus import USER, Bus

    if not conversation_id.replace("-", "").isalnum():
        return conversation_id, []
    folder = settings.data_dir / "conversations" / conversation_id
    group = folder / "messages.jsonl"
    if (folder / "state.json").exists() and group.exists():  # a group: the bus, each line with who said it
        messages: list[Any] = []
        for m in Bus(group).messages:
            if not m.text.strip() or m.dispatch:
                continue
            if m.sender == USER:
                messages.append(UserMessage(content=(TextBlock(text=m.text),), created_at=m.ts))
            else:
                said = TextBlock(text=f"{m.sender}: {m.text}")
                messages.append(
                    AssistantMessage(content=(said,), provider="group", model=m.model or "", created_at=m.ts)
                )
        return conversation_id, messages
    store = ConversationStore(settings.data_dir)
    try:
        conversation = store.get(conversation_id)
        session, _report = store.session(conversation_id, write_back=False)
        try:
            return conversation.title, list(session.messages())
        finally:
            session.close()
    except (Missing, OSError):
        pass
    path = settings.data_dir / "sessions" / f"{conversation_id}.jsonl"
    if path.exists():
        session, _report = SessionStore(path.parent).open(conversation_id)
        try:
            return "orkas run", list(session.messages())
        finally:
            session.close()
    return conversation_id, []


def reflection_model(agent_model: str, configured: Configured) -> str:
    """The model a reflection runs on (Settings → Learning): by default the small, cheap model of the agent's own
    provider (its vendor's, where Orkas knows one; a local server's own model otherwise), or the agent's model,
    or one the person named."""
    from orkas.engine.providers.vendors import SMALL_MODELS

    choice = configured.product.preferences.reflection_model
    if choice == "agent":
        return agent_model
    if choice != "small":
        return choice
    from orkas.engine.providers.registry import PREFIX_ROUTES

    provider, slash, _model = agent_model.partition("/")
    if not slash or provider not in configured.product.providers:  # a bare name: routed by its prefix
        routed = next((name for pattern, name in PREFIX_ROUTES if pattern.match(agent_model)), None)
        if not slash and routed is not None:
            provider = routed
    config = configured.product.providers.get(provider)
    vendor = "anthropic" if config is not None and config.kind == "anthropic" else provider
    small = SMALL_MODELS.get(vendor)
    return f"{provider}/{small}" if small else agent_model


def evolution_for(settings: Settings) -> Evolution:
    """Self-evolution for this install: the signals, the conversations they name, reflection on the small model
    of each agent's provider (Settings → Learning), learned-skill lookalikes from the skills' index. Only named
    agents evolve: the commander — the conversation the person has with Orkas itself — never does."""
    from orkas.adapter.learning.evolution import Evolution
    from orkas.adapter.learning.reflect import agent_reflect
    from orkas.adapter.learning.signals import SignalLog
    from orkas.engine.evolution import bundle
    from orkas.team.agents import AgentStore

    agents = AgentStore(settings.data_dir / "agents")

    def transcripts(agent: str, ids: Sequence[str]) -> list[bundle.Conversation]:
        found = []
        for ident in ids:
            title, messages = conversation_messages(settings, ident)
            if messages:
                found.append(bundle.Conversation(ident, title, messages))
        return found

    def model_of(agent: str) -> str:
        configured = load_configured(settings)
        spec = agents.load().agents.get(agent)
        _choices, default = model_choices(settings, configured)
        own = spec.model if spec is not None and spec.model else default
        if not own:
            raise NoProvider("no model is configured to reflect with")
        return reflection_model(own, configured)

    folder = settings.data_dir / "learned"
    folder.mkdir(parents=True, exist_ok=True)
    reflect = agent_reflect(lambda: build_registry(settings, load_configured(settings)), model_of, folder)
    return Evolution(
        settings.data_dir,
        SignalLog(settings.data_dir / "signals"),
        transcripts,
        reflect,
        lambda: list(agents.load().agents),
        threshold=lambda: load_configured(settings).product.preferences.learning_threshold,
    )

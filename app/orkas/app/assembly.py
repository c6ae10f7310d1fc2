"""One assembly for every entry point: what an agent of this install gets, decided in one place.

The window, the phone and `orkas run` all drive a `ConversationRuntime`; this module builds it. `actor` answers
"which agent runs this part of this conversation" for every role — the conversation's own agent (Orkas, or the
named agent it is bound to), a group's commander and members, an anonymous worker, an external agent CLI — from
one typed `AgentProfile`; `run_policy` gives a run its permissions and budget. What differs between entry points
is said once, in `Assembly`'s arguments: where the knowledge base comes from (the app's live service, or the
bases already on disk for a one-shot command), who can answer a question, and the run limits a command gave.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from orkas.adapter.conversations.attachments import AttachmentStore
from orkas.adapter.conversations.checkpoints import Checkpoints
from orkas.adapter.conversations.instructions import Instructions
from orkas.adapter.conversations.processes import ConversationProcesses
from orkas.adapter.conversations.runtime import ConversationRuntime, Hooks
from orkas.adapter.conversations.store import Conversation, ConversationStore
from orkas.adapter.schedules.store import ScheduleStore
from orkas.adapter.settings import personal
from orkas.adapter.settings.permission_rules import RuleStore
from orkas.adapter.settings.trust import FolderTrust
from orkas.adapter.settings.usage import LedgerBudget, UsageLedger
from orkas.app.agents import AgentProfile, GitWorktrees, RunLimits, build_agent, external_member
from orkas.app.config import Configured, Settings, load_configured
from orkas.app.extensions import Connections, SkillAccess, connector_hub, skill_access, skill_registry
from orkas.core.errors import ConfigError, NotFound
from orkas.engine.catalog import lookup
from orkas.engine.consent import Mode, Permissions
from orkas.engine.hooks import ALL_EVENTS, TOOL_EVENTS
from orkas.engine.instructions import ProjectInstructions
from orkas.engine.messages import Message
from orkas.engine.providers.base import REASONING
from orkas.engine.runner import Agent
from orkas.engine.tools.base import Tool

if TYPE_CHECKING:
    from orkas.adapter.connectors.hub import ConnectorHub
    from orkas.adapter.hooks.commands import HookSet
    from orkas.adapter.skills.roots import SkillRegistry
    from orkas.engine.evolution.signals import RunSignals
    from orkas.engine.memory.kb import KnowledgeBase
    from orkas.team.agents import AgentSpec, AgentStore
    from orkas.team.conversations import GroupRunner

Role = Literal["solo", "commander", "member", "worker", "external"]
Opener = Callable[[], "KnowledgeBase"]
COMMANDER = "commander"
CONVERSATION_ID = re.compile(r"^[0-9a-f]{8,64}\Z")


@dataclass(frozen=True, slots=True)
class Knowledge:
    """Where an agent's knowledge-base tools read from: openers (called on first search) for the person's
    documents and past conversations, or None where there is nothing to search. `warm` starts loading the
    base while the model answers its first turn (the app); a one-shot command never pays for that."""

    documents: Opener | None = None
    conversations: Opener | None = None
    warm: Callable[[], object] = lambda: None


def role_of(spec: AgentSpec | None, tools: Sequence[Tool], note: str, *, solo: bool = False) -> Role:
    """The one rule for who an actor is: a named agent with a CLI backend is external; a named agent is a member
    (or the conversation's own, when it answers alone); no spec with the team's tools is the commander; no spec,
    no tools and a task is an anonymous worker, which gets only its task."""
    if spec is not None:
        return "external" if spec.backend else ("solo" if solo else "member")
    if tools:
        return "commander"
    return "worker" if note else "solo"


class Assembly:
    def __init__(
        self,
        settings: Settings,
        *,
        knowledge: Knowledge | None = None,
        skills: SkillRegistry | None = None,
        connectors: ConnectorHub | None = None,
        limits: RunLimits | None = None,
        model: str | None = None,
        after_actor: Callable[[], None] = lambda: None,
    ) -> None:
        """`model` wins over the conversation's and a bound agent's for the conversation's own agent and the
        commander (a command's --model); members keep theirs. `after_actor` runs after each actor is built
        (the app brings its skills' index up to date)."""
        data = settings.data_dir
        self.settings = settings
        self.store = ConversationStore(data)
        self.attachments = AttachmentStore(data)
        self.rules = RuleStore(data / "permission_rules.json")
        self.ledger = UsageLedger(data / "usage.jsonl")
        self.processes = ConversationProcesses(data / "processes")
        self.trust = FolderTrust(data / "trusted_folders.json")
        self.checkpoints = Checkpoints(data, self.store.root)
        self.instructions = Instructions(self.trust, data, settings.home)
        self.schedules = ScheduleStore(data)
        self._agents: AgentStore | None = None
        self.skills = skills if skills is not None else skill_registry(settings, scan=False)
        self._connectors = connectors
        self.knowledge = knowledge or Knowledge()
        self.limits = limits or RunLimits()
        self.model = model
        self.after_actor = after_actor
        # (conversation, actor) → the skills its prompt listed (asked when its run's signals are counted)
        self.advertised: dict[tuple[str, str], Callable[[], list[str]]] = {}
        self.ready: dict[str, Agent] = {}  # built ahead to say a configuration mistake first (`prepare`)
        self._groups: GroupRunner | None = None

    @property
    def connectors(self) -> ConnectorHub:
        """The person's MCP servers, the hub made when first needed (a run with none set up never loads it)."""
        if self._connectors is None:
            self._connectors = connector_hub(self.settings)
        return self._connectors

    @property
    def agents(self) -> AgentStore:
        """The named agents (AGENT.md folders), loaded when one is first asked for: most runs are Orkas's own."""
        if self._agents is None:
            from orkas.team.agents import AgentStore

            path = self.settings.process_env.get("PATH", "")
            self._agents = AgentStore(self.settings.data_dir / "agents", search_path=path)
        return self._agents

    @property
    def groups(self) -> GroupRunner:
        """The group chat. The team layer loads when a group is first touched: a one-agent run never pays for it."""
        if self._groups is None:
            from orkas.team.conversations import GroupRunner

            self._groups = GroupRunner(
                self.store.root,
                self.agents,
                self.actor,
                lambda conversation: GitWorktrees(self.settings, conversation.workspace_path),
                dispatch_cap=self.settings.max_dispatch,
                model_calls=self.settings.max_model_calls,
            )
        return self._groups

    def is_group(self, conversation_id: str) -> bool:
        """Once a member has joined, a conversation stays a group (team/conversations.py says the same); NotFound for
        an id that is no conversation."""
        folder = self.store.root / conversation_id
        if not CONVERSATION_ID.match(conversation_id) or not (folder / "meta.json").exists():
            raise NotFound(f"no conversation {conversation_id!r}")
        return (folder / "state.json").exists()

    # ---- who runs ----
    def bound(self, conversation: Conversation) -> AgentSpec | None:
        """The named agent a conversation is bound to (None: Orkas itself answers). Never Orkas in its place,
        silently: a binding to an agent that is gone, broken or an outside CLI is a `ConfigError`."""
        if not conversation.agent:
            return None
        loaded = self.agents.load()
        spec = loaded.agents.get(conversation.agent)
        if spec is None or spec.backend:
            why = loaded.problems.get(conversation.agent)
            raise ConfigError(
                f"this chat is answered by {conversation.agent}, which "
                + (f"cannot be used: {why}" if why else "is not an agent of Orkas's any more")
                + ": choose who answers in Chat settings → Answered by (orkas run --agent NAME)"
            )
        return spec

    def conversation_agent(self, conversation: Conversation) -> Agent:
        """The agent that answers a one-agent conversation: Orkas, or the named agent it is bound to (one built
        ahead by `prepare` is used once)."""
        ready = self.ready.pop(conversation.id, None)
        if ready is not None:
            return ready
        spec = self.bound(conversation)
        return self.actor(conversation, spec, (), spec.prompt.strip() if spec is not None else "", None, solo=True)

    def actor(
        self,
        conversation: Conversation,
        spec: AgentSpec | None,
        tools: Sequence[Tool],
        note: str,
        folder: Path | None,
        *,
        solo: bool = False,
    ) -> Agent:
        """The agent for one actor of a conversation. Raises `ConfigError` when no provider or model can serve it."""
        role = role_of(spec, tools, note, solo=solo)
        configured = load_configured(self.settings)  # every run sees what the settings screen just changed
        self.knowledge.warm()
        name = spec.name if spec is not None else COMMANDER
        access = None if role == "worker" else skill_access(self.skills, spec.name if spec else None, _allowed(spec))
        self.after_actor()
        if role == "external":
            assert spec is not None
            return external_member(  # type: ignore[return-value]
                self.settings, spec, self._profile(conversation, role, spec, tools, note, folder, access, configured)
            )
        profile = self._profile(conversation, role, spec, tools, note, folder, access, configured)
        agent = build_agent(self.settings, profile)
        if access is not None:  # what its prompt's index offers, for the signals of its run (asked after it ends)
            window = self.limits.context_window or lookup(agent.config.model).context_window
            self.advertised[(conversation.id, name)] = lambda: access.catalog.advertised(window)
        return agent

    def _profile(
        self,
        conversation: Conversation,
        role: Role,
        spec: AgentSpec | None,
        tools: Sequence[Tool],
        note: str,
        folder: Path | None,
        access: SkillAccess | None,
        configured: Configured,
    ) -> AgentProfile:
        project = self.instructions.project(conversation)
        granted: list[str | Path] = [*conversation.granted, self.attachments.folder(conversation.id)]
        own = (*self.store.own(conversation), self.attachments.folder(conversation.id))
        self.attachments.folder(conversation.id).mkdir(parents=True, exist_ok=True)
        worker = role == "worker"
        if role in ("solo", "commander") and conversation.instructions.strip():  # the person's, for this chat
            note = "\n\n".join(part for part in (note, conversation.instructions.strip()) if part)
        member_model = spec.model if spec is not None and spec.model else None
        if role in ("member", "external"):
            model = member_model or self.model or conversation.model or None
        else:
            model = self.model or member_model or conversation.model or None
        return AgentProfile(
            workspace=folder or conversation.workspace_path,
            model=model,
            limits=self.limits,
            configured=configured,
            temperature=conversation.temperature,
            reasoning=next((r for r in REASONING if r == conversation.reasoning), "off"),
            granted=granted,
            own=own,
            knowledge=None if worker else self.knowledge.documents,
            past_conversations=None if worker else self.knowledge.conversations,
            processes=self.processes.manager(conversation.id),
            # The conversation's own agent may propose a schedule for it (the person accepts it on a card).
            extra_tools=(*tools, self._schedule_tool(conversation)) if role in ("solo", "commander") else tools,
            only_tools=spec.tools if spec is not None else None,
            note=note,
            memory_tool=not worker,
            skills=access,
            learned=None if worker else (spec.name if spec is not None else COMMANDER),
            connectors=None if worker else Connections(self.settings.data_dir, lambda: self.connectors),
            personal=personal.section(configured.product.preferences, self.settings.home),
            # Every member reads the conversation's project instructions, as the folder the chat works in has them.
            project=project,
            # The person's hooks, and the project's once its folder is trusted; read at every run. The prompt and stop
            # hooks are the conversation's (its solo agent's or commander's), the tool hooks every agent's.
            hooks=self._hooks(conversation, folder, project),
            hook_events=ALL_EVENTS if role in ("solo", "commander") else TOOL_EVENTS,
        )

    def _schedule_tool(self, conversation: Conversation) -> Tool:
        from orkas.adapter.schedules.tool import ScheduleTool  # time zones and cron: loaded with the agent's tools

        return ScheduleTool(self.schedules, conversation.id)

    def _hooks(self, conversation: Conversation, folder: Path | None, project: ProjectInstructions) -> HookSet | None:
        """The person's hooks, and the project's once its folder is trusted, as their files say now (None: no file
        configures any, and their modules stay unloaded)."""
        data, root = self.settings.data_dir, project.root
        if not (data / "hooks.json").exists() and not (root / ".orkas" / "hooks.json").exists():
            return None
        from orkas.adapter.hooks.commands import HookSet

        where = folder or conversation.workspace_path
        return HookSet.load(data, where, conversation.id, root, project.trusted())

    def prepare(self, conversation: Conversation) -> None:
        """Build the conversation's agent now, so a configuration mistake (no provider, a bad model, an agent that
        is gone) is said before anything is sent; the run then uses this very agent."""
        self.ready[conversation.id] = self.conversation_agent(conversation)

    # ---- how a run may act ----
    def run_policy(
        self, conversation: Conversation, mode: Mode | None = None, can_ask: bool = True
    ) -> tuple[Permissions, LedgerBudget]:
        """A run's permissions (the mode given, else the person's; the rules saved for its workspace) and its
        budget (the person's limits, counted in the usage ledger)."""
        product = load_configured(self.settings).product
        workspace = conversation.workspace_path
        permissions = Permissions(
            workspace=workspace,
            mode=mode or product.preferences.mode,
            can_ask=can_ask,
            rules=self.rules.for_workspace(workspace),
            on_rule_added=self.rules.add,
        )
        return permissions, self.budget(conversation.id)

    def budget(self, conversation_id: str) -> LedgerBudget:
        limits = load_configured(self.settings).product.budgets
        return LedgerBudget(self.ledger, conversation_id, **asdict(limits))

    # ---- the runtime every entry point drives ----
    def learning(self) -> bool:
        return load_configured(self.settings).product.preferences.learning

    def _recorder(self) -> Callable[[RunSignals], None]:
        """Each run's signals kept while learning is on; learning's modules load with the first run counted."""
        made: list[Callable[[RunSignals], None]] = []

        def record(signals: RunSignals) -> None:
            if not made:
                from orkas.adapter.learning.signals import SignalLog, learning_recorder

                made.append(learning_recorder(SignalLog(self.settings.data_dir / "signals"), self.learning))
            made[0](signals)

        return record

    def hooks(self, **more: object) -> Hooks:
        """What follows every run wherever it started: each named agent's run counted for learning (when it is
        on), with the skills its prompt offered; a deleted conversation's schedules removed. `more` adds the app's
        own (indexing, titles)."""
        also = more.pop("after_delete", None)

        def deleted(conversation_id: str) -> None:
            self.schedules.forget_conversation(conversation_id)
            if callable(also):
                also(conversation_id)

        return Hooks(
            after_delete=deleted,
            after_run=self._recorder(),
            learning=self.learning,
            instructions=self.instructions.in_force,
            advertised=lambda conversation_id, actor: self.advertised.get((conversation_id, actor), list)(),
            **more,  # type: ignore[arg-type]
        )

    def runtime(
        self, hooks: Hooks | None = None, *, mode: Mode | None = None, can_ask: bool = True
    ) -> ConversationRuntime:
        return ConversationRuntime(
            self.store,
            self.conversation_agent,
            lambda conversation: self.run_policy(conversation, mode, can_ask),
            hooks or self.hooks(),
            self.processes,
            _LazyGroups(self),
            self.checkpoints,
        )

    async def close(self) -> None:
        if self._connectors is not None:
            await self._connectors.close()  # local MCP servers end with the app or the command


class _LazyGroups:
    """The runtime's view of the group chat, answering "is it a group?" without loading the team layer."""

    def __init__(self, assembly: Assembly) -> None:
        self.assembly = assembly

    def is_group(self, conversation_id: str) -> bool:
        return self.assembly.is_group(conversation_id)

    def check(self, conversation: Conversation) -> None:
        self.assembly.groups.check(conversation)

    def history(self, conversation_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        return self.assembly.groups.history(conversation_id, limit)

    def size(self, conversation_id: str) -> int:
        return self.assembly.groups.size(conversation_id)

    def members(self, conversation_id: str) -> dict[str, Any]:
        return self.assembly.groups.members(conversation_id)

    def as_messages(self, conversation_id: str) -> list[Message]:
        return self.assembly.groups.as_messages(conversation_id)

    async def run(self, conversation: Conversation, text: str, **given: Any) -> bool:
        return await self.assembly.groups.run(conversation, text, **given)


def _allowed(spec: AgentSpec | None) -> Sequence[str] | None:
    return spec.skills if spec is not None else None

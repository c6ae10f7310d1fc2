"""Composition root: reads configuration once and wires the engine.

Providers come from `<data>/settings.json` (entries and provider configs) with their keys in the
credential vault (`orkas providers add …`). Environment variables keep working as a fallback for
providers the settings do not name:

    ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL
    OPENAI_API_KEY, OPENAI_BASE_URL        (any OpenAI-compatible server)
    DEEPSEEK_API_KEY, OPENROUTER_API_KEY
    OLLAMA_BASE_URL                        (a local Ollama; no key needed)
    ORKAS_MODEL                            default model string
    ORKAS_SANDBOX=off                      run commands unconfined (every command that is not a read then asks)
    BRAVE_API_KEY | TAVILY_API_KEY | SEARXNG_URL   the web_search backend
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orkas.adapter.local_servers import KNOWN as KNOWN_LOCAL
from orkas.adapter.pool import Candidate, RotatingProvider
from orkas.adapter.settings import ProductSettings, ProviderConfig, SettingsStore
from orkas.adapter.vault import Vault, VaultError, choose_key_source
from orkas.core.errors import ConfigError, NoProvider, ProviderError
from orkas.core.paths import data_dir
from orkas.core.redact import remember_secret
from orkas.engine.catalog import lookup
from orkas.engine.memory import Memory, MemoryTool
from orkas.engine.messages import user_text
from orkas.engine.prompt import SystemPrompt
from orkas.engine.providers.base import MessageEnd, Provider, ProviderRequest, ProviderSpec, Reasoning, complete
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.providers.vendors import DEFAULT_MODELS, VENDORS, create_provider
from orkas.engine.retry import RetryPolicy, describe
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.sandbox import PathDenied, PathPolicy
from orkas.engine.sandbox.confine import git_identity, toolchain_dirs
from orkas.engine.sandbox.executor import SAFE_ENV, ConfinementReport, Executor, confinement, describe_confinement
from orkas.engine.sandbox.limits import Limits, PidsLimiter
from orkas.engine.tools.base import Tool
from orkas.engine.tools.edits import DeleteFile, EditFile, WriteFile
from orkas.engine.tools.files import GrepFiles, ListFiles, ReadFile, SearchFiles, StatFile
from orkas.engine.tools.shell import Bash, ProcessManager, ProcessRead, ProcessStart, ProcessStatus, ProcessStop
from orkas.engine.tools.web import SearchBackend, WebFetch, WebSearch

if TYPE_CHECKING:  # numpy and faiss: loaded where a knowledge base or an embedder is used, not at start
    from orkas.adapter.connector_hub import ConnectorHub
    from orkas.adapter.evolution import Evolution
    from orkas.adapter.external_agent import ExternalAgent
    from orkas.adapter.packages import Packages
    from orkas.adapter.skill_roots import SkillRegistry
    from orkas.engine.memory.embedders import Embedder
    from orkas.engine.memory.kb import KnowledgeBase
    from orkas.engine.memory.rerank import ModelReranker
    from orkas.engine.skills import Catalog
    from orkas.engine.skills.tools import Save
    from orkas.team.agents import AgentSpec

log = logging.getLogger(__name__)

ENV_KEYS = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "deepseek": ("DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL"),
    "openrouter": ("OPENROUTER_API_KEY", "OPENROUTER_BASE_URL"),
    "ollama": ("OLLAMA_API_KEY", "OLLAMA_BASE_URL"),
}
KEYLESS = {"ollama"}  # local servers: configured by their URL alone


@dataclass(frozen=True, slots=True)
class Settings:
    providers: tuple[ProviderSpec, ...]
    default_model: str | None
    data_dir: Path = field(default_factory=lambda: data_dir(None))
    search: SearchBackend | None = None
    confine: bool = True  # ORKAS_SANDBOX=off: no confinement (then every command that is not a read asks)
    process_env: Mapping[str, str] = field(default_factory=dict)  # the safe part of our environment
    model_override: str | None = None  # ORKAS_MODEL
    local_servers: tuple[tuple[str, str], ...] = KNOWN_LOCAL  # where to look for Ollama / LM Studio
    max_dispatch: int = 4  # ORKAS_MAX_DISPATCH: member runs at once per group conversation
    max_model_calls: int = 10  # ORKAS_MAX_MODEL_CALLS: model calls streaming at once, all conversations
    # Where the phone mirror listens when Settings turns it on (ORKAS_MIRROR_HOST / ORKAS_MIRROR_PORT):
    # every address of this machine, on a port that stays the same so paired phones find it again.
    mirror_host: str = "0.0.0.0"
    mirror_port: int = 47615
    ssh_agent: str | None = None  # SSH_AUTH_SOCK: only for cloning a package from an ssh:// source
    # Seconds after start-up before the first reflection cycle (ORKAS_EVOLVE_SETTLE): the app settles first.
    evolve_settle: float = 600.0
    # Seconds a failing MCP server waits before the first retry (ORKAS_MCP_BACKOFF), doubling up to 30 min.
    mcp_backoff: float = 30.0


def settings_from_env(env: Mapping[str, str]) -> Settings:
    specs: list[ProviderSpec] = []
    for name, (key_var, url_var) in ENV_KEYS.items():
        key = env.get(key_var) or (env.get("ANTHROPIC_AUTH_TOKEN") if name == "anthropic" else None)
        url = env.get(url_var)
        remember_secret(key)  # an environment key never reaches a log line either
        if key or (name in KEYLESS and url) or (name == "openai" and url):
            spec = VENDORS[name]
            specs.append(replace(spec, api_key=key, base_url=url or spec.base_url))
    model = env.get("ORKAS_MODEL") or (DEFAULT_MODELS.get(specs[0].name) if specs else None)
    search: SearchBackend | None = None
    for variable in ("BRAVE_API_KEY", "TAVILY_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        remember_secret(env.get(variable))
    if env.get("BRAVE_API_KEY"):
        search = SearchBackend(kind="brave", key=env["BRAVE_API_KEY"])
    elif env.get("TAVILY_API_KEY"):
        search = SearchBackend(kind="tavily", key=env["TAVILY_API_KEY"])
    elif env.get("SEARXNG_URL"):
        search = SearchBackend(kind="searxng", url=env["SEARXNG_URL"])
    return Settings(
        providers=tuple(specs),
        default_model=model,
        data_dir=data_dir(env.get("ORKAS_HOME")),
        search=search,
        confine=env.get("ORKAS_SANDBOX", "").lower() not in ("off", "0", "no", "none"),
        process_env={k: env[k] for k in SAFE_ENV if k in env},
        model_override=env.get("ORKAS_MODEL"),
        local_servers=_local_servers(env.get("ORKAS_LOCAL_SERVERS")),
        max_dispatch=_count(env, "ORKAS_MAX_DISPATCH", 4),
        max_model_calls=_count(env, "ORKAS_MAX_MODEL_CALLS", 10),
        mirror_host=env.get("ORKAS_MIRROR_HOST") or "0.0.0.0",
        mirror_port=int(env["ORKAS_MIRROR_PORT"]) if env.get("ORKAS_MIRROR_PORT", "").isdigit() else 47615,
        ssh_agent=env.get("SSH_AUTH_SOCK") or None,
        evolve_settle=float(_count(env, "ORKAS_EVOLVE_SETTLE", 600)),
        mcp_backoff=float(_count(env, "ORKAS_MCP_BACKOFF", 30)),
    )


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    """A positive whole number from the environment; anything else is a clear configuration error."""
    value = env.get(name)
    if value is None or not value.strip():
        return default
    if not value.strip().isdigit() or int(value) < 1:
        raise ConfigError(f"{name} must be a whole number of at least 1, not {value!r}")
    return int(value)


def _local_servers(value: str | None) -> tuple[tuple[str, str], ...]:
    """`name=url,…` (tests, unusual ports); unset means the usual Ollama and LM Studio ports."""
    if not value:
        return KNOWN_LOCAL
    pairs = [item.split("=", 1) for item in value.split(",") if "=" in item]
    return tuple((name.strip(), url.strip()) for name, url in pairs)


def sandbox(settings: Settings, policy: PathPolicy, limits: Limits | None = None) -> Executor:
    """The one executor of a workspace: its private home, the toolchains it may use, the person's git identity,
    and — when the policy lets it read them — installed packages' commands on PATH, each package's own
    environment first for commands run inside it."""
    gitconfig = git_identity(policy.home / ".gitconfig") or git_identity(policy.home / ".config" / "git" / "config")
    packages_dir = (settings.data_dir / "packages").resolve()
    shims = packages_dir / ".bin"
    executor = Executor(
        policy,
        spill_dir=settings.data_dir / "outputs",
        home_dir=settings.data_dir / "sandbox-homes" / _slug(policy.workspace),
        confine=settings.confine,
        limits=limits,
        base_env=settings.process_env,
        toolchains=toolchain_dirs(policy.home, settings.process_env.get("PATH", ""), policy.secrets),
        home_files={".gitconfig": gitconfig} if gitconfig else {},
        path_suffix=[shims] if shims in policy.readable or packages_dir in policy.readable else [],
        prefer=preferred_bins(packages_dir) if packages_dir in policy.readable else {},
    )
    in_force = (executor.confined, executor.pids.method)
    if in_force not in _confinement_logged:  # once per process and kind, not once per turn
        _confinement_logged.add(in_force)
        log.info("commands run confined by %s; processes capped by %s", *in_force)
    return executor


_confinement_logged: set[tuple[str, str]] = set()


def confinement_report(settings: Settings, configured: Configured | None = None) -> ConfinementReport:
    """What confinement commands get here, in words (orkas status, the settings screen)."""
    configured = configured or load_configured(settings)
    limits = Limits(max_timeout=float(configured.product.preferences.command_timeout))
    kind = confinement() if settings.confine else "none"
    return describe_confinement(kind, limits, PidsLimiter(limits.pids, user_namespace=kind == "bubblewrap").method)


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


def _slug(path: Path) -> str:
    return hashlib.sha256(str(path).encode()).hexdigest()[:16]


def workspace_tools(
    settings: Settings, policy: PathPolicy, limits: Limits | None = None, processes: ProcessManager | None = None
) -> tuple[list[Tool], ProcessManager]:
    """The full tool set bound to one workspace, every process going through one executor. `processes`
    is the conversation's own manager (it outlives the turn); without one, the tools get a new one."""
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


@dataclass(slots=True)
class Configured:
    """What the settings file and the vault configure, and any problem reading them."""

    product: ProductSettings = field(default_factory=ProductSettings)
    vault: Vault | None = None
    problems: list[str] = field(default_factory=list)


def load_configured(settings: Settings) -> Configured:
    """Never raises: a damaged settings file or vault is reported and the app goes on without it."""
    configured = Configured()
    try:
        configured.product = SettingsStore(settings.data_dir / "settings.json").load()
    except ConfigError as e:
        configured.problems.append(str(e))
    if not (settings.data_dir / "vault.bin").exists():
        return configured  # nothing stored yet: no need to wake the OS keyring
    configured.vault = Vault(settings.data_dir / "vault.bin", choose_key_source(settings.data_dir))
    try:
        configured.vault.names()
    except VaultError as e:
        configured.problems.append(f"{e}; using environment variables only")
        configured.vault = None
    return configured


def spec_for(config: ProviderConfig, key: str | None) -> ProviderSpec:
    if config.kind == "anthropic":
        base = VENDORS["anthropic"]
    else:
        base = VENDORS.get(config.name) or replace(VENDORS["openai"], max_tokens_param="max_tokens")
    return replace(base, name=config.name, api_key=key, base_url=config.base_url or base.base_url)


def embedder_for(settings: Settings) -> Embedder | None:
    """The embedder chosen in the settings (preferences.embeddings): the bundled model, none, or an
    OpenAI-compatible provider's embeddings endpoint with its first key. Raises OSError, ValueError
    or ConfigError with the reason when the chosen one cannot be used."""
    configured = load_configured(settings)
    choice = configured.product.preferences.embeddings
    if choice == "none":
        return None
    endpoint = configured.product.embeddings_endpoint(choice)
    if endpoint is None:
        from orkas.engine.memory.embedders import default_embedder

        return default_embedder()
    config, model = endpoint
    credentials = configured.product.credentials_of(config.name)
    vault = configured.vault
    key = vault.get(credentials[0]) if credentials and vault is not None else None
    base_url = spec_for(config, key).base_url
    if not base_url:
        raise ConfigError(f"embeddings: provider {config.name!r} has no address")
    from orkas.engine.memory.embedders import OpenAIEmbedder

    return OpenAIEmbedder(base_url, model, api_key=key)


async def check_provider(product: ProductSettings, vault: Vault | None, name: str) -> list[dict[str, Any]]:
    """Try each of a provider's keys with a cheap authenticated call: [{credential, ok, message}]."""
    config = product.providers.get(name)
    if config is None:
        raise ConfigError(f"no provider {name!r}; configured: {', '.join(product.providers) or 'none'}")
    results = []
    credentials: list[str | None] = [*product.credentials_of(name)] or [None]
    for credential in credentials:
        key = vault.get(credential) if credential and vault is not None else None
        provider = create_provider(spec_for(config, key))
        try:
            if config.models:  # a real, minimal request: a server that answers any GET must not pass a bad key
                ping = ProviderRequest(model=config.models[0], messages=(user_text("Reply with OK."),), max_tokens=1)
                await complete(provider, ping)
            else:
                await provider.validate_auth()
            results.append({"credential": credential or name, "ok": True, "message": "ok"})
        except ProviderError as e:
            results.append({"credential": credential or name, "ok": False, "message": describe(e)})
        finally:
            await provider.aclose()
    return results


def chains(configured: Configured) -> dict[str, list[list[Candidate]]]:
    """Pools in entry order; each provider's chain is its first pool followed by every later pool."""
    pools: list[list[Candidate]] = []
    vault = configured.vault
    for entry in configured.product.entries:
        config = configured.product.providers.get(entry.provider)
        if config is None or (entry.credential and vault is None):
            continue
        key = vault.get(entry.credential) if entry.credential and vault is not None else None
        if entry.credential and key is None:
            continue  # the key was removed from the vault
        candidate = Candidate(create_provider(spec_for(config, key)), entry.model, entry.credential or "")
        if pools and (pools[-1][0].provider.name, pools[-1][0].model) == (entry.provider, entry.model):
            pools[-1].append(candidate)
        else:
            pools.append([candidate])
    found: dict[str, list[list[Candidate]]] = {}
    for index, pool in enumerate(pools):
        found.setdefault(pool[0].provider.name, pools[index:])
    return found


def build_registry(settings: Settings, configured: Configured | None = None) -> ProviderRegistry:
    providers: dict[str, Provider] = {}
    for name, chain in chains(configured or Configured()).items():
        providers[name] = RotatingProvider(chain)
    for spec in settings.providers:
        providers.setdefault(spec.name, create_provider(spec))
    return ProviderRegistry(providers)


# Everything in the data folder is protected, including what later versions add; a conversation's own
# default workspace and attachments are carved out for its runs alone (`own`), never their siblings.
KNOWN_DATA = (
    "workspaces",
    "attachments",
    "vault.bin",
    "vault.key",
    "settings.json",
    "conversations",
    "recycle",
    "sessions",
    "permission_rules.json",
    "connectors.json",
    "connector-health.json",
    "bridge-permissions.json",
)


def protected_data(data: Path) -> list[Path]:
    present = {p.name for p in data.iterdir()} if data.is_dir() else set()
    return [data / name for name in sorted(present | set(KNOWN_DATA))]


def model_choices(settings: Settings, configured: Configured) -> tuple[list[str], str | None]:
    """The models a conversation can be switched to (every configured provider/model, and the one the
    environment names) and the one a conversation uses when it chose none."""
    entries = [f"{e.provider}/{e.model}" for e in configured.product.entries]
    default = settings.model_override or configured.product.preferences.default_model
    default = default or (entries[0] if entries else settings.default_model)
    env = [settings.model_override, settings.default_model] if settings.providers else [settings.model_override]
    return [c for c in dict.fromkeys([*entries, *env]) if c], default


TITLE_PROMPT = (
    "Write a short title (at most six words) for a chat that begins with the exchange below. Answer with "
    "the title alone: no quotes, no punctuation at the end, in the language of the person's message.\n\n"
    "<person>\n{prompt}\n</person>\n<answer>\n{answer}\n</answer>"
)


async def suggest_title(settings: Settings, configured: Configured, model: str, prompt: str, answer: str) -> MessageEnd:
    """One short call that names a chat. Returns the provider's whole answer (its text and usage, for the
    ledger); raises `ProviderError` or `ConfigError` when it cannot be made."""
    registry = build_registry(settings, configured)
    try:
        provider, model_id = registry.resolve(model)
        request = ProviderRequest(
            model=model_id,
            messages=(user_text(TITLE_PROMPT.format(prompt=prompt[:2000], answer=answer[:2000])),),
            max_tokens=32,
        )
        return await complete(provider, request)
    finally:
        await registry.aclose()


def title_text(end: MessageEnd) -> str:
    """The title in one clean line: the model's text without quotes, markup or a trailing period."""
    text = "".join(getattr(b, "text", "") for b in end.message.content).strip().splitlines()
    line = text[0] if text else ""
    return line.strip().strip("\"'“”‘’*#`").rstrip(".。").strip()[:80]


@dataclass(frozen=True, slots=True)
class SkillAccess:
    """The skills one actor may use: its catalogue, the folders its commands may read them from, and —
    for the commander — the way to save a new custom skill (skill_save)."""

    catalog: Catalog
    readable: Sequence[Path] = ()
    save: Save | None = None
    exists: Callable[[str], bool] = lambda _name: False
    tools: Sequence[Tool] = ()  # the commander's: package_install


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
    from orkas.adapter.skill_guard import SkillGuard
    from orkas.adapter.skill_roots import Root, SkillRegistry
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
    from orkas.adapter.packages import Packages

    def executor_for(folder: Path, readable: list[Path]) -> Executor:
        folder.mkdir(parents=True, exist_ok=True)
        protected = [p for p in protected_data(settings.data_dir) if p != folder]  # the rest of the data stays hidden
        policy = PathPolicy(folder, protected=protected, own=[folder], readable=readable)
        return sandbox(settings, policy, Limits(max_timeout=900.0))

    return Packages(settings.data_dir, executor_for, lambda: protected_data(settings.data_dir), settings.ssh_agent)


def skill_access(registry: SkillRegistry, agent: str | None, allowed: Sequence[str] | None = None) -> SkillAccess:
    """What `agent` (None: the commander) may use of the registry's skills, now; with installed packages'
    commands (read-only) when there are any."""
    from orkas.adapter.custom_skills import save_custom

    registry.ensure()
    catalog = registry.catalog(agent, allowed=allowed)
    packages = registry.data / "packages"
    folders = registry.folders_for(catalog)
    if (packages / ".bin").is_dir() and any((packages / ".bin").iterdir()):
        folders = [f for f in folders if packages not in f.parents] + [packages]
    if agent is not None:
        return SkillAccess(catalog, folders)

    def save(name: str, description: str, body: str, files: Mapping[str, str]) -> Path:
        folder = save_custom(registry.custom, name, description, body, files)
        registry.refresh()
        return folder

    from orkas.adapter.package_tool import PackageInstall

    installer = PackageInstall(registry.packages, registry.refresh) if registry.packages is not None else None
    return SkillAccess(
        catalog, folders, save, lambda name: bool(registry.find(name)), tools=[installer] if installer else []
    )


def connector_hub(settings: Settings, configured: Configured | None = None) -> ConnectorHub:
    """The person's MCP servers. A local one starts through a workspace executor rooted at its `cwd` (or a folder
    of its own in the data) — the one way processes start — and runs with the person's rights: they confirmed
    that exact command. Its secrets come from the vault when it connects."""
    from orkas import __version__
    from orkas.adapter.connector_config import Connector, Connectors
    from orkas.adapter.connector_health import HealthFile
    from orkas.adapter.connector_hub import ConnectorHub

    # The vault as the CLI writes it, even when it did not exist when the app started (a header added later).
    vault = (configured.vault if configured is not None else None) or Vault(
        settings.data_dir / "vault.bin", choose_key_source(settings.data_dir)
    )

    def executor_for(connector: Connector) -> Executor:
        folder = Path(connector.cwd) if connector.cwd else settings.data_dir / "connectors" / connector.id
        folder.mkdir(parents=True, exist_ok=True)
        own = [] if connector.cwd else [folder]
        return sandbox(settings, PathPolicy(folder, protected=protected_data(settings.data_dir), own=own))

    return ConnectorHub(
        Connectors(settings.data_dir / "connectors.json", vault),
        HealthFile(settings.data_dir / "connector-health.json", base=settings.mcp_backoff),
        executor_for=executor_for,
        logs=settings.data_dir / "logs" / "connectors",
        version=__version__,
    )


def agent_policy(
    settings: Settings,
    workspace: Path,
    granted: Sequence[str | Path],
    own: Sequence[Path],
    skills: SkillAccess | None,
) -> PathPolicy:
    """The folders an agent may use: its workspace, what the conversation granted, its skills read-only."""
    try:
        return PathPolicy(
            workspace,
            granted=granted,
            protected=protected_data(settings.data_dir),
            own=own,
            readable=skills.readable if skills is not None else (),
        )
    except PathDenied as e:
        raise ConfigError(f"workspace {str(workspace)!r} cannot be used: {e.reason}") from e


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


def build_agent(
    settings: Settings,
    *,
    workspace: Path,
    model: str | None,
    max_tool_loops: int = 100,
    retries: int = 3,
    context_window: int | None = None,
    configured: Configured | None = None,
    granted: Sequence[str | Path] = (),
    own: Sequence[Path] = (),
    knowledge: KnowledgeBase | Callable[[], KnowledgeBase] | None = None,  # or what opens it, on first use
    past_conversations: KnowledgeBase | Callable[[], KnowledgeBase] | None = None,
    processes: ProcessManager | None = None,
    extra_tools: Sequence[Tool] = (),
    only_tools: Sequence[str] | None = None,
    note: str = "",
    memory_tool: bool = True,
    temperature: float | None = None,
    reasoning: Reasoning = "off",
    skills: SkillAccess | None = None,
    learned: str | None = None,
    connectors: ConnectorHub | None = None,
) -> Agent:
    """Raises `ConfigError` when no provider or model can serve the run. A group's actors add their own
    tools (`extra_tools`), keep to an allow-list (`only_tools`) and get their instructions (`note`); a named
    agent (`learned`: its name, the commander's is "commander") gets its self-understanding memo pinned."""
    configured = configured or Configured()
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
    if not workspace.is_dir():
        raise ConfigError(f"workspace {str(workspace)!r} is not a folder")
    registry = build_registry(settings, configured)
    registry.resolve(chosen)  # fail before anything runs
    policy = agent_policy(settings, workspace, granted, own, skills)
    limits = Limits(max_timeout=float(configured.product.preferences.command_timeout))
    tools, _processes = workspace_tools(settings, policy, limits, processes)
    memory = Memory.in_folder(settings.data_dir / "memory")
    if memory_tool:
        tools.append(MemoryTool(memory))
    if knowledge is not None or past_conversations is not None:
        from orkas.engine.memory.kb_tools import ChatSearch, KbList, KbRead, KbSearch
    if knowledge is not None:
        tools += [KbSearch(knowledge, reranker(registry, configured, chosen)), KbRead(knowledge), KbList(knowledge)]
    if past_conversations is not None:
        tools.append(ChatSearch(past_conversations))
    if skills is not None:
        from orkas.engine.skills import SkillRead, SkillSave, SkillSearch

        tools += [SkillSearch(skills.catalog), SkillRead(skills.catalog)]
        if skills.save is not None:
            tools.append(SkillSave(skills.save, skills.exists))
        tools += list(skills.tools)
    if connectors is not None and connectors.any_enabled():  # no server set up: no tools for them in the prompt
        from orkas.engine.tools.connectors import connector_tools

        tools += connector_tools(connectors)
    if connectors is not None and learned == "commander":  # the agent the person talks to may propose one
        from orkas.adapter.connector_tool import AddConnector

        tools.append(AddConnector(connectors.connectors))
    tools += list(extra_tools)
    if only_tools is not None:
        unknown = sorted(set(only_tools) - {t.name for t in tools})
        if unknown:
            raise ConfigError(f"unknown tools {', '.join(unknown)}; tools: {', '.join(sorted(t.name for t in tools))}")
        kept = set(only_tools) | {e.name for e in extra_tools} | {"skill_search", "skill_read"}  # its skills: read-only
        tools = [t for t in tools if t.name in kept]
    hooks: tuple[Callable[[], str | None], ...] = (memory.prompt_section,) if memory_tool else ()
    if skills is not None and len(skills.catalog):
        window = context_window or lookup(chosen).context_window
        index = skills.catalog.index(window)  # built once per turn: the prompt stays byte-stable within it
        hooks = (*hooks, lambda: index)
    if learned is not None:  # what this agent's reflections taught it (engine/evolution/memo.py), read each turn
        from orkas.engine.evolution.memo import Memo

        hooks = (*hooks, Memo(settings.data_dir / "learned" / learned / "memo").prompt_section)
    if note:
        hooks = (lambda: note, *hooks)
    return Agent(
        providers=registry,
        config=RunConfig(
            model=chosen,
            max_tool_loops=max_tool_loops,
            retry=RetryPolicy(max_retries=retries),
            context_window=context_window,
            temperature=temperature,
            reasoning=reasoning,
        ),
        workspace=policy.workspace,
        tools=tools,
        system_prompt=SystemPrompt(hooks=hooks),  # read at the start of every turn
    )


def external_member(
    settings: Settings,
    spec: AgentSpec,
    *,
    workspace: Path,
    granted: Sequence[str | Path] = (),
    own: Sequence[Path] = (),
    knowledge: KnowledgeBase | Callable[[], KnowledgeBase] | None = None,
    past_conversations: KnowledgeBase | Callable[[], KnowledgeBase] | None = None,
    skills: SkillAccess | None = None,
    connectors: ConnectorHub | None = None,
) -> ExternalAgent:
    """A member run by an external agent CLI (`backend:` in its AGENT.md), with the bridge back to Orkas: the
    skills it may use, the knowledge base, past chats, the person's connectors, and the hand-back."""
    from orkas.adapter.bridge import CAPABILITIES, BridgeGrants
    from orkas.adapter.bridge_tools import BridgeParts, handlers
    from orkas.adapter.external_agent import BACKENDS, ExternalAgent
    from orkas.engine.memory.kb_tools import ChatSearch, KbList, KbRead, KbSearch

    backend = next(b for b in BACKENDS if b == spec.backend)
    policy = agent_policy(settings, workspace, granted, own, skills)
    executor = sandbox(settings, policy)
    parts = BridgeParts(
        workspace=policy.workspace,
        catalog=skills.catalog if skills is not None else None,
        bash=Bash(executor),
        knowledge=[KbSearch(knowledge), KbRead(knowledge), KbList(knowledge)] if knowledge is not None else (),
        chat_search=ChatSearch(past_conversations) if past_conversations is not None else None,
        read_conversation=lambda ident: conversation_messages(settings, ident),
        connectors=connectors,
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
        )
        if made.exit_code != 0:
            log.warning("no worktree for %s: git said %s", agent, made.output[-500:])
            return None
        return target

    async def diff(self, worktree: Path) -> str:
        shown = await self._executor().run(
            "git add -A -N . && git diff HEAD --stat && git diff HEAD", cwd=worktree, timeout=60
        )
        text = shown.output.strip() or "(no changes)"
        return text if len(text) <= self.MAX_DIFF else text[: self.MAX_DIFF] + "\n[diff cut here]"


def conversation_messages(settings: Settings, conversation_id: str) -> tuple[str, list[Any]]:
    """(title, messages) of a conversation wherever it lives: the app's chats, group chats, `orkas run` sessions.
    Empty when it is gone (deleted since its runs were counted)."""
    from orkas.adapter.conversations import ConversationStore
    from orkas.adapter.sessions import SessionStore
    from orkas.core.errors import NotFound as Missing
    from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage
    from orkas.team.bus import USER, Bus

    if not conversation_id.replace("-", "").isalnum():
        return conversation_id, []
    group = settings.data_dir / "conversations" / conversation_id / "messages.jsonl"
    if group.exists():  # a group: the bus, each line with who said it
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


def evolution_for(settings: Settings) -> Evolution:
    """Self-evolution for this install: the signals, the conversations they name, reflection with each agent's
    own model (the default one for the commander), learned-skill lookalikes from the skills' index."""
    from orkas.adapter.evolution import Evolution, agent_reflect
    from orkas.adapter.signals import SignalLog
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
        spec = agents.load().agents.get(agent)
        if spec is not None and spec.model:
            return spec.model
        _choices, default = model_choices(settings, load_configured(settings))
        if not default:
            raise NoProvider("no model is configured to reflect with")
        return default

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

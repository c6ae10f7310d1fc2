"""What the app is configured with, read once: the settings file, the vault, and the environment as a fallback.

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

Also here: the provider registry those make, the embedder the knowledge base uses, and the short model calls
the app makes for itself (a chat's title).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orkas.adapter.providers.admin import url_with_credentials
from orkas.adapter.providers.local_servers import KNOWN as KNOWN_LOCAL
from orkas.adapter.providers.pool import Candidate, RotatingProvider
from orkas.adapter.settings.store import ProductSettings, ProviderConfig, SettingsStore
from orkas.adapter.settings.vault import Vault, VaultError
from orkas.adapter.updates.address import RELEASE_KEYS
from orkas.core.errors import ConfigError, ProviderError
from orkas.core.paths import data_dir
from orkas.core.redact import remember_secret
from orkas.engine.messages import user_text
from orkas.engine.providers.base import MessageEnd, Provider, ProviderRequest, ProviderSpec, complete
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.providers.vendors import DEFAULT_MODELS, VENDORS, create_provider
from orkas.engine.retry import describe
from orkas.engine.sandbox import SAFE_ENV
from orkas.engine.tools.search_backend import SearchBackend

if TYPE_CHECKING:
    from orkas.adapter.updates.updater import Updater

    # numpy and faiss: loaded where a knowledge base or an embedder is used, not at start
    from orkas.engine.memory.embedders import Embedder


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
    home: Path = field(default_factory=Path.home)  # HOME: where the person's other agents keep their instructions
    # Updates: ORKAS_UPDATES=off stops the automatic daily check (Settings → About's switch, for a managed machine);
    # ORKAS_UPDATE_KEY replaces the release key a feed must be signed with (a private build's own);
    # ORKAS_UPDATE_SETTLE: seconds after start-up before the first automatic check.
    update_checks: bool = True
    update_keys: tuple[str, ...] = RELEASE_KEYS
    update_settle: float = 60.0


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
        home=Path(env["HOME"]) if env.get("HOME") else Path.home(),
        update_checks=env.get("ORKAS_UPDATES", "").lower() not in ("off", "0", "no", "none"),
        update_keys=tuple(env["ORKAS_UPDATE_KEY"].split(",")) if env.get("ORKAS_UPDATE_KEY") else RELEASE_KEYS,
        update_settle=float(_count(env, "ORKAS_UPDATE_SETTLE", 60)),
    )


def environment_providers(settings: Settings) -> tuple[dict[str, str], ...]:
    """The providers environment variables set (name, where, which variable holds the key; never the key)."""
    return tuple(
        {"name": spec.name, "base_url": spec.base_url or "", "variable": ENV_KEYS[spec.name][0] if spec.api_key else ""}
        for spec in settings.providers
        if spec.name in ENV_KEYS
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
    configured.vault = Vault.at(settings.data_dir)
    try:
        configured.vault.names()
    except VaultError as e:
        configured.problems.append(f"{e}; using environment variables only")
        configured.vault = None
    return configured


def spec_for(config: ProviderConfig, key: str | None, vault: Vault | None = None) -> ProviderSpec:
    """What a configured provider is to the engine: its vendor row, the key, and its base URL (with the gateway's
    user and password from the vault, when it has them)."""
    if config.kind == "anthropic":
        base = VENDORS["anthropic"]
    else:
        base = VENDORS.get(config.name) or replace(VENDORS["openai"], max_tokens_param="max_tokens")
    url = url_with_credentials(config.base_url, config.name, vault) if config.base_url else base.base_url
    return replace(base, name=config.name, api_key=key, base_url=url)


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
        provider = create_provider(spec_for(config, key, vault))
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
        candidate = Candidate(create_provider(spec_for(config, key, vault)), entry.model, entry.credential or "")
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


TITLE_WORDS = 6  # what TITLE_PROMPT asks for; a model that writes more is cut here, not shown whole


def title_text(end: MessageEnd) -> str:
    """The title in one clean line of at most `TITLE_WORDS` words: the model's text without quotes, markup or a
    trailing period. (A title the person types is never cut: the store's `rename` takes it as it is.)"""
    text = "".join(getattr(b, "text", "") for b in end.message.content).strip().splitlines()
    line = text[0] if text else ""
    words = line.strip().strip("\"'“”‘’*#`").split()[:TITLE_WORDS]
    return " ".join(words).rstrip(".。,，:;").strip("\"'“”‘’*#`")[:80]


def updater_for(settings: Settings, feed: str | None = None) -> Updater:
    """The one updater (Settings → About, `orkas update`, the daily check): the feed the settings name (or
    `feed`), the release keys, this process's safe environment for the version it asks before installing."""
    from orkas.adapter.updates.updater import Updater

    store = SettingsStore(settings.data_dir / "settings.json")
    return Updater(
        settings.data_dir / "updates",
        feed_url=(lambda: feed) if feed else (lambda: store.load().preferences.update_feed),
        keys=settings.update_keys,
        env=settings.process_env,
    )

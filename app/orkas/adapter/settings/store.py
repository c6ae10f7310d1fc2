"""Product settings in `<data>/settings.json`: configured providers and the ordered model entries.

No secret is ever written here: an entry names its credential, whose value lives in the vault.
Consecutive entries with the same (provider, model) form a pool; later entries are fallbacks.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from orkas.adapter.updates.address import DEFAULT_FEED, allowed_url
from orkas.core.errors import ConfigError
from orkas.core.fsutil import atomic_write
from orkas.core.logging import LEVELS, LogLevel
from orkas.engine.consent import Mode

Kind = Literal["anthropic", "openai-compatible"]
DEFAULT_MODEL: dict[str, str] = {"anthropic": "claude-sonnet-4-5", "openai-compatible": "gpt-5-mini"}
MODES: tuple[Mode, ...] = ("ask", "auto", "plan")
Theme = Literal["system", "light", "dark"]
THEMES: tuple[Theme, ...] = ("system", "light", "dark")
Language = Literal["auto", "en", "zh", "pt"]
LANGUAGES: tuple[Language, ...] = ("auto", "en", "zh", "pt")


@dataclass(slots=True)
class ProviderConfig:
    name: str
    kind: Kind
    base_url: str | None = None
    models: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Entry:
    provider: str
    model: str
    credential: str | None  # a vault name; None for keyless local servers


@dataclass(slots=True)
class Budgets:
    """US dollars; None means no limit."""

    per_conversation: float | None = None
    per_day: float | None = None
    per_month: float | None = None  # the calendar month, local time


LIMITS = ("per_day", "per_month", "per_conversation")  # what `orkas budget` and Settings → Usage can set


@dataclass(slots=True)
class Preferences:
    """What the person chose in the settings screen."""

    default_model: str | None = None  # "provider/model"; None means the first entry
    mode: Mode = "ask"  # permission mode for new runs (read from a file: `check` makes it so)
    theme: Theme = "system"
    language: Language = "auto"
    # what the knowledge base's meaning search runs on: "bundled" (the local model), "none" (keyword
    # search only) or "provider/model" (an OpenAI-compatible provider's embeddings endpoint)
    embeddings: str = "bundled"
    # a second stage for knowledge-base search (engine/memory/rerank.py): "off", "chat" (the model the chat
    # uses) or "provider/model" — one model call per search reorders the best 30 passages
    rerank: str = "off"
    command_timeout: int = 600  # seconds: the longest a command may run; the model cannot ask for more
    log_level: LogLevel = "info"  # what goes into <data>/logs (ORKAS_LOG_LEVEL overrides it)
    auto_title: bool = True  # a short model call names each new chat after its first answer
    mirror: bool = False  # the phone mirror listens on the LAN (Settings → Phone)
    # Memory and learning are off until the person turns them on (first run offers both; Settings; orkas memory /
    # orkas evolve enable): cross-session memory pins a profile and notes into every turn and lets the agent write
    # them; learning lets named agents reflect on their runs and keep skills and a memo.
    memory: bool = False
    learning: bool = False  # agents reflect in the background and keep what they learn (Settings → Learning)
    learning_threshold: float = 0.7  # the weighted trigger a run must reach to be reflected on
    # The model reflections use: "small" (the small, cheap model of the agent's provider), "agent" (the agent's
    # own) or "provider/model".
    reflection_model: str = "small"
    offered: bool = False  # the first-run offer of memory and learning was answered (either way)
    # The person's own instructions (adapter/settings/personal.py): a copy imported into Orkas, and/or one of their
    # other agents' files read live ("claude", "codex", "gemini"); offered once when such a file exists.
    personal_instructions: str = ""
    personal_file: str = ""
    instructions_offered: bool = False
    # Updates (Settings → About): the signed feed read once a day, and whether to read it at all. Nothing but the
    # feed's address is asked for (adapter/updates/fetch.py).
    update_check: bool = True
    update_feed: str = DEFAULT_FEED

    def check(self) -> None:
        for flag in ("auto_title", "mirror", "memory", "learning", "offered", "instructions_offered", "update_check"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(f"{flag} must be true or false, not {getattr(self, flag)!r}")
        if self.personal_file not in ("", "claude", "codex", "gemini"):
            raise ConfigError(f"personal_file must be claude, codex, gemini or empty, not {self.personal_file!r}")
        if not isinstance(self.personal_instructions, str) or len(self.personal_instructions) > 32 * 1024:
            raise ConfigError("personal_instructions must be text of at most 32 KiB")
        if not isinstance(self.learning_threshold, int | float) or not 0.1 <= self.learning_threshold <= 5:
            raise ConfigError(f"learning_threshold must be 0.1 to 5, not {self.learning_threshold!r}")
        if not isinstance(self.command_timeout, int) or not 10 <= self.command_timeout <= 86_400:
            raise ConfigError(f"command_timeout must be 10 to 86400 seconds, not {self.command_timeout!r}")
        if self.embeddings not in ("bundled", "none") and not all(self.embeddings.partition("/")[::2]):
            raise ConfigError(f"embeddings must be bundled, none or provider/model, not {self.embeddings!r}")
        if not isinstance(self.reflection_model, str) or (
            self.reflection_model not in ("small", "agent") and not all(self.reflection_model.partition("/")[::2])
        ):
            raise ConfigError(f"reflection_model must be small, agent or provider/model, not {self.reflection_model!r}")
        if not isinstance(self.rerank, str) or (
            self.rerank not in ("off", "chat") and not all(self.rerank.partition("/")[::2])
        ):
            raise ConfigError(f"rerank must be off, chat or provider/model, not {self.rerank!r}")
        if self.update_feed != DEFAULT_FEED and (
            not isinstance(self.update_feed, str) or len(self.update_feed) > 2048 or not allowed_url(self.update_feed)
        ):
            raise ConfigError(f"update_feed must be an https address, not {self.update_feed!r}")
        for name, value, allowed in (
            ("mode", self.mode, MODES),
            ("theme", self.theme, THEMES),
            ("language", self.language, LANGUAGES),
            ("log_level", self.log_level, LEVELS),
        ):
            if value not in allowed:
                raise ConfigError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")


@dataclass(slots=True)
class ProductSettings:
    providers: dict[str, ProviderConfig] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)
    budgets: Budgets = field(default_factory=Budgets)
    preferences: Preferences = field(default_factory=Preferences)

    def embeddings_endpoint(self, choice: str) -> tuple[ProviderConfig, str] | None:
        """The provider and model an embeddings choice names; None for "bundled" and "none". Raises
        ConfigError when it names no OpenAI-compatible provider configured here, or no model."""
        if choice in ("bundled", "none"):
            return None
        name, _, model = choice.partition("/")
        config = self.providers.get(name)
        if config is None or config.kind != "openai-compatible" or not model:
            raise ConfigError(f"embeddings: {choice} is not an OpenAI-compatible provider/model configured here")
        return config, model

    def credentials_of(self, provider: str) -> list[str]:
        return list(dict.fromkeys(e.credential for e in self.entries if e.provider == provider and e.credential))

    def add_entry(self, entry: Entry) -> None:
        """Keep pools together: a new key for (provider, model) goes right after that pool."""
        if entry in self.entries:
            return
        same = [i for i, e in enumerate(self.entries) if (e.provider, e.model) == (entry.provider, entry.model)]
        if same:
            self.entries.insert(same[-1] + 1, entry)
        else:
            self.entries.append(entry)


MAX_LIMIT = 1_000_000.0  # US dollars: a limit above this is a typo, not a limit


def spending_limit(value: object) -> float | None:
    """A spending limit as the person gave it (the CLI, the Usage form, settings.json): dollars from 0 to
    1,000,000, 0 or None meaning no limit. Raises ConfigError saying what is allowed: a negative, infinite or
    non-numeric limit once made settings.json unreadable, and the limits with it."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigError(f"a spending limit is an amount in US dollars, not {value!r}")
    try:
        amount = float(value)
    except ValueError:
        raise ConfigError(f"a spending limit is an amount in US dollars, not {value!r}") from None
    except OverflowError:  # an integer too large for a float: out of range like any other
        amount = math.inf
    if not math.isfinite(amount) or not 0 <= amount <= MAX_LIMIT:
        said = str(value) if len(str(value)) <= 40 else f"{str(value)[:20]}…"
        raise ConfigError(f"a spending limit is from $0 (no limit) to ${MAX_LIMIT:,.0f}, not {said}")
    return amount or None


class LimitRefused(ConfigError):
    """A spending limit that is not a valid amount; `limit` names which (one of LIMITS)."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(f"{limit.replace('_', ' ')}: {message}")
        self.limit = limit


def _limit_or_none(value: object) -> float | None:
    try:
        return spending_limit(value)
    except ConfigError:
        return None


def set_limits(store: SettingsStore, **limits: object) -> Budgets:
    """Change the limits named (LIMITS; None or 0 turns one off), keep the others: the one way `orkas budget`
    and Settings → Usage change them, checked alike. Nothing is saved unless every value is valid; the
    refusal (LimitRefused) names the limit it is about."""
    unknown = set(limits) - set(LIMITS)
    if unknown:
        raise ConfigError(f"unknown spending limit: {', '.join(sorted(unknown))}")
    checked: dict[str, float | None] = {}
    for name, value in limits.items():
        try:
            checked[name] = spending_limit(value)
        except ConfigError as e:
            raise LimitRefused(name, str(e)) from None
    try:
        product = store.load()
    except ConfigError:
        product = store.load(repairing_limits=True)  # a bad stored limit is what the person is replacing
    for name, amount in checked.items():
        setattr(product.budgets, name, amount)
    store.save(product)
    return product.budgets


class SettingsStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, *, repairing_limits: bool = False) -> ProductSettings:
        """`repairing_limits`: a stored limit that is not a valid amount reads as no limit (for `set_limits`,
        which is about to replace it); otherwise it makes the file unreadable, as any bad value does."""
        if not self.path.exists():
            return ProductSettings()
        try:
            data = json.loads(self.path.read_text())
            providers = {
                name: ProviderConfig(
                    name=name, kind=p["kind"], base_url=p.get("base_url"), models=list(p.get("models", []))
                )
                for name, p in data.get("providers", {}).items()
            }
            entries = [Entry(e["provider"], e["model"], e.get("credential")) for e in data.get("entries", [])]
            raw_budgets = data.get("budgets") or {}
            read = _limit_or_none if repairing_limits else spending_limit
            budgets = Budgets(**{name: read(raw_budgets.get(name)) for name in LIMITS})
            raw_preferences = data.get("preferences") or {}
            known = {k: raw_preferences[k] for k in Preferences.__dataclass_fields__ if k in raw_preferences}
            preferences = Preferences(**known)
            preferences.check()
        except (OSError, ValueError, KeyError, TypeError, ConfigError) as e:
            why = str(e) if isinstance(e, ConfigError) else type(e).__name__
            raise ConfigError(f"settings file {self.path} cannot be read ({why}): fix or remove it") from e
        return ProductSettings(providers=providers, entries=entries, budgets=budgets, preferences=preferences)

    def save(self, settings: ProductSettings) -> None:
        data = {
            "providers": {
                name: {k: v for k, v in asdict(p).items() if k != "name"} for name, p in settings.providers.items()
            },
            "entries": [asdict(e) for e in settings.entries],
            "budgets": asdict(settings.budgets),
            "preferences": asdict(settings.preferences),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())

"""The settings routes: what the settings screen shows and changes — providers and keys (never
returned), the vault's passphrase, preferences, local model servers — and, when present, memory and
the knowledge base (memory_routes.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import JSONResponse

from orkas import __version__
from orkas.adapter.providers.admin import NewProvider, add_provider, describe_providers, pools, remove_provider, reorder
from orkas.adapter.providers.catalog import PRESETS, list_models
from orkas.adapter.settings.preferences import change_preferences
from orkas.adapter.settings.store import Kind, LimitRefused, set_limits
from orkas.adapter.settings.usage import LedgerBudget
from orkas.adapter.settings.vault import FileKey, VaultError
from orkas.core.errors import ConfigError, ProviderError
from orkas.engine.retry import describe
from orkas.engine.sandbox.executor import confinement
from orkas.server.answers import answered, config
from orkas.server.memory_routes import add_knowledge_routes, add_memory_routes
from orkas.server.routing import Api, HTTPException, Query

if TYPE_CHECKING:
    from orkas.adapter.conversations.store import Conversation
    from orkas.server.services import Services


class Passphrase(BaseModel):
    passphrase: str = Field(min_length=1, max_length=1024)


class NewPassphrase(BaseModel):
    passphrase: str | None = Field(default=None, max_length=1024)  # None: remove the passphrase
    current: str | None = Field(default=None, max_length=1024)


class AddProvider(BaseModel):
    name: str
    kind: Kind
    key: str | None = Field(default=None, max_length=4096)
    base_url: str | None = None
    models: list[str] = Field(default_factory=list)


class RuleRef(BaseModel):
    key: str = Field(min_length=1, max_length=2000)
    workspace: str = Field(min_length=1, max_length=4096)


class ListModels(BaseModel):
    provider: str | None = Field(default=None, max_length=64)
    kind: Kind | None = None
    base_url: str | None = Field(default=None, max_length=2000)
    key: str | None = Field(default=None, max_length=4096)


class Order(BaseModel):
    order: list[str]


class Limits(BaseModel):
    """Spending limits in US dollars; null or 0 turns a limit off, a limit not sent is kept (as `orkas budget`
    does). The values are checked by the adapter (store.spending_limit), which says what is allowed."""

    model_config = ConfigDict(extra="forbid")

    per_day: Any = None
    per_month: Any = None
    per_conversation: Any = None


class PreferencesChange(BaseModel):
    """Values are checked by the adapter (preferences.py), which says in a sentence what is allowed."""

    default_model: str | None = None
    mode: str | None = None
    theme: str | None = None
    language: str | None = None
    embeddings: str | None = None
    rerank: str | None = Field(default=None, max_length=300)
    command_timeout: int | None = Field(default=None, ge=10, le=86_400)
    log_level: str | None = None
    auto_title: bool | None = None
    memory: bool | None = None
    learning: bool | None = None
    learning_threshold: float | None = Field(default=None, ge=0.1, le=5)
    reflection_model: str | None = Field(default=None, max_length=300)
    offered: bool | None = None
    personal_instructions: str | None = Field(default=None, max_length=32 * 1024)
    personal_file: str | None = Field(default=None, max_length=16)
    instructions_offered: bool | None = None
    update_check: bool | None = None
    update_feed: str | None = Field(default=None, max_length=2048)
    clear_default_model: bool = False


def add_settings_routes(api: Api, services: Services, chats: Callable[[], Sequence[Conversation]] = list) -> None:
    """`chats`: the person's conversations (not the deleted), for what a per-conversation limit means to them now."""

    @api.get("/api/settings")
    async def settings_get() -> dict[str, Any]:
        product = config(services.settings.load)
        vault = services.vault() if product.providers else None
        return {
            "providers": describe_providers(product, vault),
            "environment_providers": [p for p in services.environment if p["name"] not in product.providers],
            "pools": pools(product),
            "preferences": asdict(product.preferences),
            "vault": vault.key_source.description if vault is not None else None,
            "vault_key": services.vault().key_source.state(),
            "sandbox": services.sandbox() if services.sandbox is not None else {"kind": confinement()},
            "about": {"version": __version__, "logs": str(services.settings.path.parent / "logs")},
        }

    @api.get("/api/usage")
    async def usage_summary(days: int = Query(default=30, ge=1, le=366)) -> dict[str, Any]:
        """What the model calls used and cost: per day over the last `days` days, and per model."""
        if services.usage is None:
            return {"days": [], "models": [], "total": {}}
        return await asyncio.to_thread(services.usage.summary, days)

    @api.get("/api/budget")
    async def budget_get() -> dict[str, Any]:
        """The spending limits every run keeps to (the window's, the phone's and `orkas run`'s), today's and this
        month's spend, and `reached`: the day's and month's limits already spent up to (the next model call of any
        run is refused while one is), each with what was spent."""
        budgets = config(services.settings.load).budgets
        spent = await asyncio.to_thread(services.usage.day) if services.usage is not None else None
        month = await asyncio.to_thread(services.usage.month_cost) if services.usage is not None else 0.0
        reached: dict[str, float] = {}
        if services.usage is not None:  # not a conversation's: its limit is said where that chat stops
            overall = LedgerBudget(services.usage, "", per_day=budgets.per_day, per_month=budgets.per_month)
            reached = await asyncio.to_thread(overall.reached)
        spent_today = spent.cost if spent is not None else 0.0
        partial = bool(spent and spent.partial_calls)  # a call stopped before its final count: at least this much
        return {
            **asdict(budgets),
            "spent_today": spent_today,
            "spent_today_at_least": partial,
            "spent_month": month,
            "spent_month_at_least": services.usage is not None
            and await asyncio.to_thread(services.usage.month_partial),
            "reached": reached,
            "chats_over": await asyncio.to_thread(chats_over, budgets.per_conversation),
        }

    def chats_over(limit: float | None) -> list[dict[str, Any]]:
        """The chats that already spent a per-conversation limit: their next message stops before any model call."""
        if limit is None or services.usage is None:
            return []
        titles = {c.id: c.title for c in chats()}
        return [{"id": c, "title": titles[c], "spent": cost} for c, cost in services.usage.chats_over(limit, titles)]

    @api.put("/api/budget")
    async def budget_set(body: Limits) -> Any:
        """A refused amount answers 400 with the sentence and `limit`, the one it is about (the form marks it)."""
        changes = {name: getattr(body, name) for name in body.model_fields_set}
        try:
            await asyncio.to_thread(set_limits, services.settings, **changes)
        except LimitRefused as e:
            return JSONResponse({"detail": str(e), "limit": e.limit}, status_code=400)
        except ConfigError as e:
            raise HTTPException(status_code=400, detail=str(e)) from None
        return await budget_get()

    @api.get("/api/models")
    async def models_list() -> dict[str, Any]:
        """What the composer's model switcher offers, and the model a conversation uses by default."""
        choices, default = services.models() if services.models is not None else ([], None)
        return {"models": choices, "default": default}

    @api.post("/api/vault/unlock")
    async def vault_unlock(body: Passphrase) -> dict[str, object]:
        """Unlock a passphrase-protected key file for this launch (a wrong passphrase is a 403)."""
        source = services.vault().key_source
        if isinstance(source, FileKey):
            try:
                await asyncio.to_thread(source.unlock, body.passphrase)
            except VaultError as e:
                raise HTTPException(status_code=403, detail=str(e)) from None
        return source.state()

    @api.post("/api/vault/passphrase")
    async def vault_passphrase(body: NewPassphrase) -> dict[str, object]:
        """Protect the key file with a passphrase, change it, or (passphrase null) remove it. When one is
        set, the current passphrase is needed: an open window must not be enough to strip it."""
        source = services.vault().key_source
        if not isinstance(source, FileKey):
            raise HTTPException(status_code=409, detail="the OS keyring keeps the vault's key; there is no key file")

        def change() -> None:
            if source.protected:
                source.unlock(body.current or "")
            if body.passphrase is None:
                source.unprotect()
            else:
                source.protect(body.passphrase)

        try:
            await asyncio.to_thread(change)
        except VaultError as e:
            wrong = "wrong passphrase" in str(e)
            raise HTTPException(status_code=403 if wrong else 400, detail=str(e)) from None
        return source.state()

    @api.get("/api/settings/preferences")
    async def preferences_get() -> dict[str, Any]:
        """The preferences alone, for the page's start: what /api/settings gives besides (the vault key's place
        above all, which wakes the OS keyring) waits until Settings is opened."""
        return asdict(config(services.settings.load).preferences)

    @api.put("/api/settings/preferences")
    async def preferences_set(body: PreferencesChange) -> dict[str, Any]:
        changes = body.model_dump(exclude={"clear_default_model"})
        with answered():
            preferences = await change_preferences(
                services.settings, changes, clear_default_model=body.clear_default_model, knowledge=services.knowledge
            )
        return asdict(preferences)

    @api.post("/api/providers", status_code=201)
    async def providers_add(body: AddProvider) -> dict[str, Any]:
        product = config(services.settings.load)
        new = NewProvider(body.name, body.kind, key=body.key, base_url=body.base_url, models=tuple(body.models))
        vault = services.vault()
        config(lambda: add_provider(product, vault, new))
        services.settings.save(product)
        shown = describe_providers(product, vault)
        return next(p for p in shown if p["name"] == body.name)

    @api.delete("/api/providers/{name}", status_code=204)
    async def providers_remove(name: str) -> None:
        product = config(services.settings.load)
        config(lambda: remove_provider(product, services.vault(), name))
        services.settings.save(product)

    @api.put("/api/providers/order")
    async def providers_order(body: Order) -> dict[str, Any]:
        product = config(services.settings.load)
        config(lambda: reorder(product, body.order))
        services.settings.save(product)
        return {"pools": pools(product)}

    @api.post("/api/providers/{name}/test")
    async def providers_test(name: str) -> dict[str, Any]:
        return {"results": await services.test_provider(name)}

    @api.get("/api/rules")
    async def rules_list() -> list[dict[str, str]]:
        """The person's "always allow" answers, by workspace (Settings → Permissions and rules)."""
        if services.rules is None:
            return []
        return [{"workspace": r.workspace, "key": r.key} for r in services.rules.load()]

    @api.post("/api/rules/remove")
    async def rules_remove(body: RuleRef) -> dict[str, int]:
        """Take an "always allow" back: the next such action asks again."""
        if services.rules is None:
            raise HTTPException(status_code=404, detail="no rules here")
        removed = services.rules.remove(body.key, Path(body.workspace))
        if not removed:
            raise HTTPException(status_code=404, detail=f"no rule {body.key!r} for {body.workspace}")
        return {"removed": len(removed)}

    @api.get("/api/providers/presets")
    async def providers_presets() -> list[dict[str, Any]]:
        return [preset.public() for preset in PRESETS]

    @api.post("/api/providers/models")
    async def providers_models(body: ListModels) -> dict[str, Any]:
        """The models a provider lists: one being added (its kind, URL and the key typed), or one that is
        configured (by name: its URL and first key from the vault; the key never comes back)."""
        kind, base_url, key = body.kind, body.base_url, body.key
        if body.provider:
            product = config(services.settings.load)
            configured = product.providers.get(body.provider)
            if configured is None:
                raise HTTPException(status_code=404, detail=f"no provider {body.provider!r}")
            kind, base_url = configured.kind, configured.base_url
            credentials = product.credentials_of(body.provider)
            key = services.vault().get(credentials[0]) if credentials else None
        if kind is None:
            raise HTTPException(status_code=400, detail="say which kind of provider (or name a configured one)")
        try:
            with answered():  # ConfigError: nothing to ask (no base URL)
                models = await list_models(kind, base_url, key, provider=body.provider or kind)
        except ProviderError as e:
            raise HTTPException(status_code=400, detail=describe(e)) from None
        return {"models": models}

    if services.memory is not None:
        add_memory_routes(api, services.memory)
    if services.knowledge is not None:
        add_knowledge_routes(api, services.knowledge)

    @api.get("/api/local-servers")
    async def local_servers() -> list[dict[str, Any]]:
        return await services.detect_local()

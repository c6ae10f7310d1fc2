"""Changing the person's preferences: the product's rules for it, in one place (the server's route
and any other caller only pass the change on). A default model (and a reranking model) must be one that is
configured, an
embeddings choice must name a usable endpoint, and choosing another embedder re-embeds the knowledge
base on a worker thread; a new log level applies at once."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any, Protocol

from orkas.adapter.providers.admin import pools
from orkas.adapter.settings.store import Preferences, SettingsStore
from orkas.core.errors import ConfigError
from orkas.core.logging import apply_log_level


class Reembeds(Protocol):
    def use_embedder(self) -> None: ...


async def change_preferences(
    store: SettingsStore,
    changes: dict[str, Any],
    *,
    clear_default_model: bool = False,
    knowledge: Reembeds | None = None,
) -> Preferences:
    """Apply `changes` (fields of `Preferences`; None values are ignored), check and save them.
    Raises ConfigError with a sentence the person can act on."""
    product = store.load()
    current = asdict(product.preferences)
    wanted = {k: v for k, v in changes.items() if v is not None and k in current}
    if clear_default_model:
        wanted["default_model"] = None
    for name in ("default_model", "rerank", "reflection_model"):  # a model named must be configured
        if wanted.get(name) not in (None, "off", "chat", "small", "agent") and wanted[name] not in pools(product):
            raise ConfigError(f"{wanted[name]} is not a configured model")
    embeddings = wanted.get("embeddings")
    if embeddings:
        product.embeddings_endpoint(embeddings)  # raises when that endpoint cannot be used
    preferences = Preferences(**{**current, **wanted})
    preferences.check()
    product.preferences = preferences
    store.save(product)
    if wanted.get("log_level"):
        apply_log_level(preferences.log_level)
    if embeddings and embeddings != current["embeddings"] and knowledge is not None:
        await asyncio.to_thread(knowledge.use_embedder)
    return preferences

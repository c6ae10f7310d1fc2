"""Which provider serves a model string.

`provider/model` splits explicitly (`openrouter/anthropic/claude-x` → openrouter, `anthropic/claude-x`).
A bare name routes by its prefix (claude* → anthropic, gpt-*/o1/o3/o4 → openai, deepseek-* →
deepseek, …) when that provider is configured, else to the default provider (a local server may
well serve "deepseek-r1"). An unknown provider is a `ConfigError` naming the ones
that are configured.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from orkas.core.errors import ConfigError
from orkas.engine.providers.base import Provider

PREFIX_ROUTES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), provider)
    for pattern, provider in (
        (r"^claude", "anthropic"),
        (r"^(gpt-|chatgpt-|o1|o3|o4)", "openai"),
        (r"^deepseek-", "deepseek"),
        (r"^gemini-", "google"),
        (r"^(mistral-|codestral|magistral)", "mistral"),
        (r"^grok-", "xai"),
        (r"^(glm-)", "zai"),
        (r"^(kimi-|moonshot-)", "moonshot"),
    )
)


class ProviderRegistry:
    def __init__(self, providers: Mapping[str, Provider], *, default: str | None = None) -> None:
        self._providers = dict(providers)
        if default is not None and default not in self._providers:
            raise ConfigError(f"default provider {default!r} is not configured; configured: {self._names()}")
        self._default = default or next(iter(self._providers), None)

    def _names(self) -> str:
        return ", ".join(sorted(self._providers)) or "(none)"

    @property
    def names(self) -> list[str]:
        return list(self._providers)

    @property
    def default_name(self) -> str | None:
        """The provider a bare model name goes to when no prefix routes it."""
        return self._default

    async def aclose(self) -> None:
        for provider in self._providers.values():
            await provider.aclose()

    def get(self, name: str) -> Provider:
        try:
            return self._providers[name]
        except KeyError:
            raise ConfigError(f"unknown provider {name!r}; configured: {self._names()}") from None

    def resolve(self, model: str) -> tuple[Provider, str]:
        """(provider, model id as that provider names it). Raises `ConfigError`."""
        model = model.strip()
        if not model:
            raise ConfigError("no model given")
        head, sep, rest = model.partition("/")
        if sep and head in self._providers:
            if not rest:
                raise ConfigError(f"model string {model!r} names a provider but no model")
            return self._providers[head], rest
        for pattern, provider in PREFIX_ROUTES:
            if pattern.match(model):
                if provider in self._providers:
                    return self._providers[provider], model
                break  # e.g. "deepseek-r1" served by a local Ollama: the default provider decides
        if sep:
            raise ConfigError(
                f"unknown provider {head!r} in {model!r}; configured: {self._names()} "
                f"(write provider/model, e.g. openrouter/{model})"
            )
        if self._default is None:
            raise ConfigError(f"no provider is configured for model {model!r}")
        return self._providers[self._default], model

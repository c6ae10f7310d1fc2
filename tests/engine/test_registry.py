"""Model-string routing."""

from __future__ import annotations

import pytest

from orkas.core.errors import ConfigError
from orkas.engine.providers.registry import ProviderRegistry
from tests.fakes.scripted import ScriptedProvider


def registry(*names: str, default: str | None = None) -> ProviderRegistry:
    return ProviderRegistry({n: ScriptedProvider(name=n) for n in names}, default=default)


@pytest.mark.parametrize(
    ("model", "provider", "model_id"),
    [
        ("anthropic/claude-x", "anthropic", "claude-x"),
        ("openrouter/anthropic/claude-x", "openrouter", "anthropic/claude-x"),
        ("claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
        ("gpt-5-mini", "openai", "gpt-5-mini"),
        ("o3", "openai", "o3"),
        ("o4-mini", "openai", "o4-mini"),
        ("deepseek-reasoner", "deepseek", "deepseek-reasoner"),
        ("llama3.2", "anthropic", "llama3.2"),  # no prefix rule: the default (first) provider
    ],
)
def test_routing(model: str, provider: str, model_id: str) -> None:
    reg = registry("anthropic", "openai", "deepseek", "openrouter")
    chosen, resolved = reg.resolve(model)
    assert (chosen.name, resolved) == (provider, model_id)


def test_prefix_for_an_unconfigured_provider_falls_to_the_default() -> None:
    chosen, model = registry("ollama").resolve("deepseek-r1:7b")
    assert (chosen.name, model) == ("ollama", "deepseek-r1:7b")


def test_explicit_default() -> None:
    chosen, _ = registry("anthropic", "ollama", default="ollama").resolve("qwen3")
    assert chosen.name == "ollama"


def test_unknown_provider_names_the_configured_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown provider 'mistral'.*configured: anthropic, openai"):
        registry("openai", "anthropic").resolve("mistral/large")


def test_empty_and_half_strings_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match="no model given"):
        registry("openai").resolve("  ")
    with pytest.raises(ConfigError, match="names a provider but no model"):
        registry("openai").resolve("openai/")


def test_no_providers() -> None:
    with pytest.raises(ConfigError, match="no provider is configured"):
        registry().resolve("llama3")
    with pytest.raises(ConfigError, match="default provider 'x' is not configured"):
        registry("openai", default="x")

"""Vendors as data: each row points a name at a wire API with its defaults.

Adding an OpenAI-compatible vendor is adding a row, not code.
"""

from __future__ import annotations

from dataclasses import replace

from orkas.core.errors import ConfigError
from orkas.engine.providers.base import Capabilities, Provider, ProviderSpec

ANTHROPIC_CAPS = Capabilities(images=True, images_in_tool_results=True, reasoning=True, prompt_cache=True)
# OpenAI's tool messages take text only; images go into a user message after the results.
OPENAI_CAPS = Capabilities(images=True, images_in_tool_results=False, reasoning=False)
LOCAL_CAPS = replace(OPENAI_CAPS, local=True)

VENDORS: dict[str, ProviderSpec] = {
    spec.name: spec
    for spec in (
        ProviderSpec(name="anthropic", api="anthropic-messages", capabilities=ANTHROPIC_CAPS),
        ProviderSpec(
            name="openai",
            api="openai-chat",
            base_url="https://api.openai.com/v1",
            capabilities=replace(OPENAI_CAPS, reasoning=True, prompt_cache=True),
            max_tokens_param="max_completion_tokens",
        ),
        ProviderSpec(
            name="deepseek",
            api="openai-chat",
            base_url="https://api.deepseek.com/v1",
            capabilities=Capabilities(images=False, images_in_tool_results=False),
        ),
        ProviderSpec(
            name="openrouter",
            api="openai-chat",
            base_url="https://openrouter.ai/api/v1",
            capabilities=OPENAI_CAPS,
        ),
        ProviderSpec(
            name="ollama",
            api="openai-chat",
            base_url="http://127.0.0.1:11434/v1",
            capabilities=OPENAI_CAPS,
            read_timeout=900.0,
        ),
        ProviderSpec(
            name="lmstudio",
            api="openai-chat",
            base_url="http://127.0.0.1:1234/v1",
            capabilities=OPENAI_CAPS,
            read_timeout=900.0,
        ),
        ProviderSpec(
            name="vllm",
            api="openai-chat",
            base_url="http://127.0.0.1:8000/v1",
            capabilities=OPENAI_CAPS,
            read_timeout=900.0,
        ),
    )
}

DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-5-mini",
    "deepseek": "deepseek-chat",
    "openrouter": "anthropic/claude-sonnet-4.5",
    "ollama": "llama3.2",
}


# Each vendor's small, cheap model: what background work (reflection) runs on unless the person chose another.
SMALL_MODELS: dict[str, str] = {
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-5-mini",
    "deepseek": "deepseek-chat",
    "openrouter": "anthropic/claude-haiku-4.5",
}


def create_provider(spec: ProviderSpec) -> Provider:
    if spec.api == "anthropic-messages":
        from orkas.engine.providers.anthropic import AnthropicProvider

        return AnthropicProvider(spec)
    if spec.api == "openai-chat":
        from orkas.engine.providers.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(spec)
    raise ConfigError(f"provider {spec.name!r} uses unknown wire API {spec.api!r}")

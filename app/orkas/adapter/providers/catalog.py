"""What the Providers screen offers: presets with their endpoints filled in, and the models a provider
lists (so nobody has to type a model name from memory).

Listing calls the provider the person is adding, with the key they typed, on their click — the only
network call the settings screen makes. An answer that is not a model list is an error said plainly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from orkas.core.errors import ConfigError, ProviderError


@dataclass(frozen=True, slots=True)
class Preset:
    id: str
    label: str
    kind: str  # anthropic | openai-compatible
    base_url: str | None
    needs_key: bool = True
    local: bool = False

    def public(self) -> dict[str, Any]:
        return asdict(self)


PRESETS: tuple[Preset, ...] = (
    Preset("anthropic", "Anthropic", "anthropic", None),
    Preset("openai", "OpenAI", "openai-compatible", "https://api.openai.com/v1"),
    Preset("gemini", "Google Gemini", "openai-compatible", "https://generativelanguage.googleapis.com/v1beta/openai"),
    Preset("deepseek", "DeepSeek", "openai-compatible", "https://api.deepseek.com/v1"),
    Preset("openrouter", "OpenRouter", "openai-compatible", "https://openrouter.ai/api/v1"),
    Preset("groq", "Groq", "openai-compatible", "https://api.groq.com/openai/v1"),
    Preset("mistral", "Mistral", "openai-compatible", "https://api.mistral.ai/v1"),
    Preset("xai", "xAI", "openai-compatible", "https://api.x.ai/v1"),
    Preset("ollama", "Ollama (this computer)", "openai-compatible", "http://127.0.0.1:11434/v1", False, True),
    Preset("lmstudio", "LM Studio (this computer)", "openai-compatible", "http://127.0.0.1:1234/v1", False, True),
    Preset("custom", "Custom (OpenAI-compatible)", "openai-compatible", None),
)
LIST_SECONDS = 15.0
MAX_MODELS = 500


async def list_models(kind: str, base_url: str | None, key: str | None, *, provider: str = "") -> list[str]:
    """The model ids the provider lists, sorted. Raises ProviderError (unreachable, refused key,
    not a model list) or ConfigError (nothing to ask)."""
    import httpx  # only when someone asks

    if kind == "anthropic":
        from orkas.engine.providers.anthropic import API_VERSION, DEFAULT_BASE_URL

        url = (base_url or DEFAULT_BASE_URL).rstrip("/") + "/v1/models?limit=1000"
        headers = {"authorization": f"Bearer {key or ''}", "anthropic-version": API_VERSION}
    elif kind == "openai-compatible":
        if not base_url:
            raise ConfigError("a base URL is needed to list an OpenAI-compatible provider's models")
        url = base_url.rstrip("/") + "/models"
        headers = {"Authorization": f"Bearer {key}"} if key else {}
    else:
        raise ConfigError(f"kind must be anthropic or openai-compatible, not {kind!r}")
    name = provider or kind
    try:
        async with httpx.AsyncClient(timeout=LIST_SECONDS, follow_redirects=False) as client:
            response = await client.get(url, headers=headers)
    except httpx.HTTPError as e:
        raise ProviderError(
            f"could not reach {url.split('?')[0]}: {type(e).__name__}", kind="network", provider=name
        ) from e
    if response.status_code in (401, 403):
        raise ProviderError("the key was refused", kind="auth", provider=name, status=response.status_code)
    if response.status_code >= 400:
        raise ProviderError(
            f"listing models failed (HTTP {response.status_code})",
            kind="server"
            if response.status_code >= 500
            else "not_found"
            if response.status_code == 404
            else "bad_request",
            provider=name,
            status=response.status_code,
        )
    try:
        entries = response.json()["data"]
        models = sorted({str(entry["id"]) for entry in entries if isinstance(entry, dict) and entry.get("id")})
    except (ValueError, KeyError, TypeError):
        raise ProviderError("the answer was not a list of models", kind="bad_request", provider=name) from None
    return models[:MAX_MODELS]

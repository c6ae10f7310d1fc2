"""Adding, listing, reordering and removing providers: shared by `orkas providers` and the settings screen.

Keys go to the vault under a credential name (`anthropic#1`, `anthropic#2`…); settings.json only
names them. What is shown of a key is its mask, never the key. A base URL with a user and password in it
(a gateway's) is kept without them; they go to the vault as `<provider>:url` and travel in their own header
(engine/providers/base.py `url_credentials`), beside the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from orkas.adapter.settings.store import DEFAULT_MODEL, Entry, Kind, ProductSettings, ProviderConfig
from orkas.adapter.settings.vault import Vault, mask
from orkas.core.errors import ConfigError
from orkas.engine.providers.base import without_credentials

KINDS: tuple[Kind, ...] = ("anthropic", "openai-compatible")


@dataclass(frozen=True, slots=True)
class NewProvider:
    name: str
    kind: Kind
    key: str | None = None
    base_url: str | None = None
    models: tuple[str, ...] = ()


def check_name(name: str) -> None:
    if not name or len(name) > 40 or not all(c.isalnum() or c in "-_." for c in name):
        raise ConfigError(f"provider name {name!r}: use 1-40 letters, digits, '-', '_' or '.'")


def add_provider(product: ProductSettings, vault: Vault, new: NewProvider) -> str | None:
    """Add a provider or another key for one; returns the key's credential name. The caller saves `product`."""
    check_name(new.name)
    if new.kind not in KINDS:
        raise ConfigError(f"kind must be one of {', '.join(KINDS)}, not {new.kind!r}")
    if new.base_url and not new.base_url.startswith(("http://", "https://")):
        raise ConfigError(f"base URL {new.base_url!r} must start with http:// or https://")
    config = product.providers.get(new.name)
    if config is not None and config.kind != new.kind:
        raise ConfigError(f"provider {new.name!r} is already configured as {config.kind!r}")
    config = config or ProviderConfig(name=new.name, kind=new.kind)
    if new.base_url:
        config.base_url, userinfo = _split_userinfo(new.base_url)
        if userinfo:
            vault.set(url_credential(new.name), userinfo)
    for model in new.models:
        if model.strip() and model.strip() not in config.models:
            config.models.append(model.strip())
    if not config.models:
        config.models.append(DEFAULT_MODEL[new.kind])
    key = (new.key or "").strip()
    if not key and (new.kind == "anthropic" or not config.base_url):
        raise ConfigError("a key is needed (only a local server with a base URL can go without one)")
    credential = None
    if key:
        taken = set(product.credentials_of(new.name)) | set(vault.names())
        number = 1
        while f"{new.name}#{number}" in taken:
            number += 1
        credential = f"{new.name}#{number}"
        vault.set(credential, key)
    product.providers[new.name] = config
    for model in config.models:
        product.add_entry(Entry(new.name, model, credential))
    return credential


def url_credential(provider: str) -> str:
    """The vault's name for the user and password of a provider's base URL."""
    return f"{provider}:url"


def url_with_credentials(base_url: str | None, provider: str, vault: Vault | None) -> str | None:
    """The base URL with its user and password put back from the vault (only ever handed to the provider)."""
    userinfo = vault.get(url_credential(provider)) if vault is not None and base_url else None
    if not userinfo or base_url is None or "://" not in base_url:
        return base_url
    scheme, rest = base_url.split("://", 1)
    return f"{scheme}://{userinfo}@{rest}"


def _split_userinfo(url: str) -> tuple[str, str | None]:
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=hostport)), userinfo


def remove_provider(product: ProductSettings, vault: Vault | None, name: str) -> None:
    if name not in product.providers:
        raise ConfigError(f"no provider {name!r}; configured: {', '.join(product.providers) or 'none'}")
    if vault is not None:
        for credential in [*product.credentials_of(name), url_credential(name)]:
            if credential in vault.names():
                vault.delete(credential)
    del product.providers[name]
    product.entries = [e for e in product.entries if e.provider != name]
    if product.preferences.default_model and product.preferences.default_model.split("/", 1)[0] == name:
        product.preferences.default_model = None


def reorder(product: ProductSettings, order: list[str]) -> None:
    """Put the pools ("provider/model") in this order; keys inside a pool keep theirs."""
    pools = list(dict.fromkeys(f"{e.provider}/{e.model}" for e in product.entries))
    if sorted(order) != sorted(pools) or len(set(order)) != len(order):
        raise ConfigError(f"the new order must list each of {', '.join(pools) or 'no models'} exactly once")
    rank = {pool: i for i, pool in enumerate(order)}
    product.entries.sort(key=lambda e: rank[f"{e.provider}/{e.model}"])  # stable: pool members keep their order


def describe_providers(product: ProductSettings, vault: Vault | None) -> list[dict[str, Any]]:
    """Each provider with its models and masked keys: what the settings screen and `providers list` show."""
    shown = []
    for name, config in product.providers.items():
        keys = []
        for credential in product.credentials_of(name):
            secret = vault.get(credential) if vault is not None else None
            keys.append({"credential": credential, "masked": mask(secret) if secret else None})
        url = without_credentials(config.base_url)
        if vault is not None and url_credential(name) in vault.names():
            url = f"{url} (with a user and password, kept in the vault)"
        shown.append({"name": name, "kind": config.kind, "base_url": url, "models": config.models, "keys": keys})
    return shown


def pools(product: ProductSettings) -> list[str]:
    return list(dict.fromkeys(f"{e.provider}/{e.model}" for e in product.entries))

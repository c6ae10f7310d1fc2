"""Providers from the settings screen and the CLI: keys to the vault, masks out, order, preferences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orkas.adapter.providers.admin import NewProvider, add_provider, describe_providers, pools, remove_provider, reorder
from orkas.adapter.settings.store import Preferences, ProductSettings, SettingsStore
from orkas.adapter.settings.vault import FileKey, Vault
from orkas.core.errors import ConfigError


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(tmp_path / "vault.bin", FileKey(tmp_path / "vault.key"))


def test_keys_go_to_the_vault_and_only_masks_come_out(vault: Vault) -> None:
    product = ProductSettings()
    key = "sk-ant-api03-abcdefghijklmnop-WXYZ"
    assert add_provider(product, vault, NewProvider("work", "anthropic", key=key, models=("claude-a",))) == "work#1"
    assert add_provider(product, vault, NewProvider("work", "anthropic", key=key + "2")) == "work#2"
    shown = describe_providers(product, vault)
    assert shown[0]["keys"] == [
        {"credential": "work#1", "masked": "sk-…WXYZ"},
        {"credential": "work#2", "masked": "sk-…XYZ2"},
    ]
    assert key not in json.dumps(shown) and vault.get("work#1") == key


@pytest.mark.parametrize(
    ("new", "message"),
    [
        (NewProvider("bad name!", "anthropic", key="k"), "provider name"),
        (NewProvider("x", "openai-compatible"), "a key is needed"),
        (NewProvider("x", "anthropic"), "a key is needed"),
        (NewProvider("x", "openai-compatible", base_url="ftp://host"), "must start with http"),
        (NewProvider("x", "magic", key="k"), "kind must be"),  # type: ignore[arg-type]
    ],
)
def test_bad_providers_get_clear_errors_and_change_nothing(vault: Vault, new: NewProvider, message: str) -> None:
    product = ProductSettings()
    with pytest.raises(ConfigError, match=message):
        add_provider(product, vault, new)
    assert product.providers == {} and vault.names() == []


def test_a_local_server_needs_no_key_and_pools_can_be_reordered(vault: Vault) -> None:
    product = ProductSettings()
    add_provider(product, vault, NewProvider("work", "anthropic", key="sk-1234567890", models=("claude-a",)))
    add_provider(
        product,
        vault,
        NewProvider("ollama", "openai-compatible", base_url="http://127.0.0.1:11434/v1", models=("qwen3",)),
    )
    assert pools(product) == ["work/claude-a", "ollama/qwen3"]
    reorder(product, ["ollama/qwen3", "work/claude-a"])
    assert pools(product) == ["ollama/qwen3", "work/claude-a"]
    with pytest.raises(ConfigError, match="exactly once"):
        reorder(product, ["ollama/qwen3"])
    product.preferences.default_model = "work/claude-a"
    remove_provider(product, vault, "work")
    assert pools(product) == ["ollama/qwen3"] and vault.names() == []
    assert product.preferences.default_model is None  # never points at a removed model
    with pytest.raises(ConfigError, match="no provider"):
        remove_provider(product, vault, "work")


def test_preferences_are_saved_and_bad_values_refused(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    product = ProductSettings(preferences=Preferences(mode="plan", theme="dark", language="zh"))
    store.save(product)
    assert store.load().preferences == Preferences(mode="plan", theme="dark", language="zh")
    with pytest.raises(ConfigError, match="mode must be one of"):
        Preferences(mode="yolo").check()
    raw = json.loads((tmp_path / "settings.json").read_text())
    raw["preferences"]["theme"] = "neon"
    (tmp_path / "settings.json").write_text(json.dumps(raw))
    with pytest.raises(ConfigError, match="cannot be read"):
        store.load()

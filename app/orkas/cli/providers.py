"""`orkas providers add | list | remove | test`: model providers with their keys in the vault.

Running `add` again for a provider adds another key to its pool. A key given as `-` (or not at all,
in a terminal) is read without echo, so it never lands in the shell history.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the real imports wait until a providers command runs: `orkas` starts faster
    from orkas.adapter.settings.store import SettingsStore
    from orkas.adapter.settings.vault import Vault

EXIT_OK, EXIT_FAILED = 0, 1


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    providers = commands.add_parser("providers", help="add, list, remove and test model providers")
    actions = providers.add_subparsers(dest="providers_command")
    add = actions.add_parser("add", help="add a provider, or another key to its pool")
    add.add_argument("name", help="a name for it, e.g. anthropic, openai, ollama, work-proxy")
    add.add_argument("--kind", choices=["anthropic", "openai-compatible"], required=True)
    add.add_argument("--key", help="the API key; '-' reads it from standard input")
    add.add_argument("--base-url", help="for proxies and local servers, e.g. http://127.0.0.1:11434/v1")
    add.add_argument("--model", action="append", default=[], help="a model to use (repeat for several)")
    actions.add_parser("list", help="configured providers, with keys masked")
    remove = actions.add_parser("remove", help="remove a provider and its keys")
    remove.add_argument("name")
    test = actions.add_parser("test", help="check each key of a provider against its API")
    test.add_argument("name")
    detect = actions.add_parser("detect", help="find Ollama and LM Studio on this machine")
    detect.add_argument("--add", action="store_true", help="add what was found as providers")


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    from orkas.adapter.settings.store import SettingsStore
    from orkas.adapter.settings.vault import Vault, VaultError
    from orkas.app import environment_providers, settings_from_env

    settings = settings_from_env(env)
    store = SettingsStore(settings.data_dir / "settings.json")
    vault = Vault.at(settings.data_dir)
    command = args.providers_command or "list"
    try:
        if command == "add":
            return _add(args, store, vault)
        if command == "remove":
            return _remove(args.name, store, vault)
        if command == "test":
            return asyncio.run(_test(args.name, store, vault))
        if command == "detect":
            return asyncio.run(_detect(args.add, store, env))
        return _list(store, vault, environment_providers(settings))
    except VaultError as e:
        print(f"orkas: {e}", file=sys.stderr)
        return EXIT_FAILED


def _read_key(given: str | None) -> str | None:
    if given == "-":
        return sys.stdin.readline().strip() or None
    if given:
        return given
    if sys.stdin.isatty():
        return getpass.getpass("API key (leave empty for a local server): ").strip() or None
    return None


def _add(args: argparse.Namespace, store: SettingsStore, vault: Vault) -> int:
    from orkas.adapter.providers.admin import NewProvider, add_provider
    from orkas.adapter.settings.vault import mask

    product = store.load()
    key = _read_key(args.key)
    new = NewProvider(args.name, args.kind, key=key, base_url=args.base_url, models=tuple(args.model))
    credential = add_provider(product, vault, new)
    store.save(product)
    config = product.providers[args.name]
    shown = f"key {credential} {mask(key)}" if key and credential else "no key"
    print(f"{args.name}: {', '.join(config.models)} ({shown}; keys stored in {vault.key_source.description})")
    return EXIT_OK


def _list(store: SettingsStore, vault: Vault, environment: tuple[dict[str, str], ...] = ()) -> int:
    from orkas.adapter.providers.admin import describe_providers, pools

    product = store.load()
    for found in environment:  # they answer too: a run uses them (the settings' own come first)
        if found["name"] not in product.providers:
            where = f" at {found['base_url']}" if found["base_url"] else ""
            key = f"its key in ${found['variable']}" if found["variable"] else "no key"
            print(f"{found['name']}{where}: from the environment ({key}; orkas providers add keeps it in the vault)")
    if not product.providers:
        if not environment:
            print("no providers configured (orkas providers add NAME --kind anthropic --key -)")
        return EXIT_OK
    for provider in describe_providers(product, vault):
        keys = [f"{k['credential']} {k['masked'] or '(missing from the vault)'}" for k in provider["keys"]]
        where = f" at {provider['base_url']}" if provider["base_url"] else ""
        models = ", ".join(provider["models"])
        print(f"{provider['name']} ({provider['kind']}{where}): models {models}; keys: {', '.join(keys) or 'none'}")
    print(f"order: {' → '.join(pools(product))}")
    print(f"vault key: {vault.key_source.description}")
    return EXIT_OK


def _remove(name: str, store: SettingsStore, vault: Vault) -> int:
    from orkas.adapter.providers.admin import remove_provider

    product = store.load()
    remove_provider(product, vault, name)
    store.save(product)
    print(f"removed {name} and its keys")
    return EXIT_OK


async def _test(name: str, store: SettingsStore, vault: Vault) -> int:
    from orkas.app import check_provider

    results = await check_provider(store.load(), vault, name)
    for result in results:
        print(f"{result['credential']}: {result['message']}")
    return EXIT_OK if all(r["ok"] for r in results) else EXIT_FAILED


async def _detect(add: bool, store: SettingsStore, env: Mapping[str, str]) -> int:
    from orkas.adapter.providers.local_servers import detect
    from orkas.adapter.settings.store import Entry, ProviderConfig
    from orkas.app import settings_from_env

    found = await detect(settings_from_env(env).local_servers)
    if not found:
        print("no local model server answered (looked for Ollama on 11434 and LM Studio on 1234)")
        return EXIT_OK
    product = store.load()
    for server in found:
        print(f"{server.name} at {server.base_url}: {', '.join(server.models) or 'no models pulled yet'}")
        if add and server.models:
            config = product.providers.get(server.name) or ProviderConfig(
                server.name, "openai-compatible", server.base_url
            )
            config.models = list(dict.fromkeys([*config.models, *server.models]))
            product.providers[server.name] = config
            for model in server.models:
                product.add_entry(Entry(server.name, model, None))
    if add:
        store.save(product)
        print("added; they cost nothing per token")
    return EXIT_OK

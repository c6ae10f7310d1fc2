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

from orkas.adapter.settings import DEFAULT_MODEL, Entry, ProviderConfig, SettingsStore
from orkas.adapter.vault import Vault, VaultError, choose_key_source, mask
from orkas.app import settings_from_env, spec_for
from orkas.core.errors import ConfigError, ProviderError
from orkas.engine.providers.vendors import create_provider
from orkas.engine.retry import describe

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
    settings = settings_from_env(env)
    store = SettingsStore(settings.data_dir / "settings.json")
    vault = Vault(settings.data_dir / "vault.bin", choose_key_source(settings.data_dir))
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
        return _list(store, vault)
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
    product = store.load()
    config = product.providers.get(args.name)
    if config is not None and config.kind != args.kind:
        raise ConfigError(f"provider {args.name!r} is already configured as {config.kind!r}")
    config = config or ProviderConfig(name=args.name, kind=args.kind)
    if args.base_url:
        config.base_url = args.base_url
    for model in args.model:
        if model not in config.models:
            config.models.append(model)
    if not config.models:
        config.models.append(DEFAULT_MODEL[args.kind])
    product.providers[args.name] = config
    key = _read_key(args.key)
    credential = None
    if key:
        taken = set(product.credentials_of(args.name)) | set(vault.names())
        number = 1
        while f"{args.name}#{number}" in taken:
            number += 1
        credential = f"{args.name}#{number}"
        vault.set(credential, key)
    elif args.kind == "anthropic" or not config.base_url:
        raise ConfigError("a key is needed (use --key, or --key - to type it without echo)")
    for model in config.models:
        product.add_entry(Entry(args.name, model, credential))
    store.save(product)
    shown = f"key {credential} {mask(key)}" if key and credential else "no key"
    print(f"{args.name}: {', '.join(config.models)} ({shown}; keys stored in {vault.key_source.description})")
    return EXIT_OK


def _list(store: SettingsStore, vault: Vault) -> int:
    product = store.load()
    if not product.providers:
        print("no providers configured (orkas providers add NAME --kind anthropic --key -)")
        return EXIT_OK
    for name, config in product.providers.items():
        keys = []
        for credential in product.credentials_of(name):
            secret = vault.get(credential)
            keys.append(f"{credential} {mask(secret)}" if secret else f"{credential} (missing from the vault)")
        where = f" at {config.base_url}" if config.base_url else ""
        print(f"{name} ({config.kind}{where}): models {', '.join(config.models)}; keys: {', '.join(keys) or 'none'}")
    print(f"order: {' → '.join(f'{e.provider}/{e.model}' for e in product.entries)}")
    print(f"vault key: {vault.key_source.description}")
    return EXIT_OK


def _remove(name: str, store: SettingsStore, vault: Vault) -> int:
    product = store.load()
    if name not in product.providers:
        raise ConfigError(f"no provider {name!r}; configured: {', '.join(product.providers) or 'none'}")
    for credential in product.credentials_of(name):
        vault.delete(credential)
    del product.providers[name]
    product.entries = [e for e in product.entries if e.provider != name]
    store.save(product)
    print(f"removed {name} and its keys")
    return EXIT_OK


async def _test(name: str, store: SettingsStore, vault: Vault) -> int:
    product = store.load()
    config = product.providers.get(name)
    if config is None:
        raise ConfigError(f"no provider {name!r}; configured: {', '.join(product.providers) or 'none'}")
    failed = 0
    for credential in product.credentials_of(name) or [None]:  # type: ignore[list-item]
        key = vault.get(credential) if credential else None
        provider = create_provider(spec_for(config, key))
        try:
            await provider.validate_auth()
            print(f"{credential or name}: ok")
        except ProviderError as e:
            failed += 1
            print(f"{credential or name}: {describe(e)}")
        finally:
            await provider.aclose()
    return EXIT_FAILED if failed else EXIT_OK


async def _detect(add: bool, store: SettingsStore, env: Mapping[str, str]) -> int:
    from orkas.adapter.local_servers import KNOWN, detect

    servers = KNOWN
    if env.get("ORKAS_LOCAL_SERVERS"):  # name=url,… (tests, unusual ports)
        servers = tuple(tuple(item.split("=", 1)) for item in env["ORKAS_LOCAL_SERVERS"].split(","))  # type: ignore[misc]
    found = await detect(servers)
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

"""The MCP servers the person added: `<data>/connectors.json` holds what is not secret; header and env values
live only in the vault (`connector:<id>:header:<name>`, `connector:<id>:env:<name>`).

    remote   {"id": "custom-notion", "name": "notion", "url": "https://…", "headers": ["Authorization"]}
    local    {"id": "custom-files", "name": "files", "command": ["npx", "-y", "…"], "env": ["TOKEN"], "cwd": …,
              "confined": true, "folders": ["/home/ana/notes"]}

A local server added now runs confined (bubblewrap: its network on, its own folder — or `cwd` — and the folders
the person names, read and written; a private home; nothing else of theirs), unless they chose to run it
unconfined on the confirmation. An entry written before confinement existed has no "confined": it keeps running
as it did (unconfined), and the list says so.

Ids are `custom-<slug>` (≤ 48 characters), so a person's server can never pass for one Orkas ships. A remote URL
is https, or http on this machine only. At most 64 headers or env entries, each value ≤ 4,096 characters and
without CR or LF. Anything else is a `ConfigError` saying what, and nothing is written.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from orkas.adapter.settings.vault import Vault
from orkas.core.errors import ConfigError, NotFound
from orkas.core.fsutil import atomic_write
from orkas.core.redact import remember_secret

MAX_ENTRIES = 64
MAX_VALUE = 4096
_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,128}\Z")


@dataclass(slots=True)
class Connector:
    id: str
    name: str
    url: str | None = None  # remote (streamable HTTP)
    command: list[str] = field(default_factory=list)  # local (a subprocess speaking stdio)
    cwd: str | None = None
    headers: list[str] = field(default_factory=list)  # names only: values are in the vault
    env: list[str] = field(default_factory=list)
    enabled: bool = True
    oauth: bool = False  # (remote) signs in with OAuth: its tokens are in the vault (signin.py), never here
    confined: bool = False  # (local) runs in the sandbox; an entry from before confinement has none: unconfined
    folders: list[str] = field(default_factory=list)  # (local, confined) the person's folders it may use

    @property
    def kind(self) -> str:
        return "remote" if self.url else "local"

    def public(self) -> dict[str, Any]:
        return {**asdict(self), "kind": self.kind}


def slug(name: str) -> str:
    value = re.sub(r"[^a-z0-9]+", "-", name.strip().lower()).strip("-")
    if not value:
        raise ConfigError(f"connector name {name!r}: use letters or digits")
    ident = f"custom-{value}"
    if len(ident) > 48:
        raise ConfigError(f"connector name {name!r} is too long (its id would pass 48 characters)")
    return ident


def check_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme == "https" and parts.hostname:
        return url.strip()
    if parts.scheme == "http" and parts.hostname:
        host = parts.hostname
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if loopback:
            return url.strip()
        raise ConfigError(f"{url!r}: plain http only to this machine (127.0.0.1, ::1, localhost); use https")
    raise ConfigError(f"{url!r}: give an https:// URL (or http:// on this machine)")


def check_pairs(pairs: Mapping[str, str], what: str) -> dict[str, str]:
    if len(pairs) > MAX_ENTRIES:
        raise ConfigError(f"at most {MAX_ENTRIES} {what} entries, not {len(pairs)}")
    for key, value in pairs.items():
        if not _KEY.match(key):
            raise ConfigError(f"{what} name {key!r}: letters, digits, _ . - only")
        if "\r" in value or "\n" in value or "\0" in value:
            raise ConfigError(f"the {what} value of {key} contains a line break: refused (it could inject more)")
        if len(value) > MAX_VALUE:
            raise ConfigError(f"the {what} value of {key} is longer than {MAX_VALUE:,} characters")
    return dict(pairs)


def command_folders(argv: Sequence[str], home: Path | None = None) -> list[Path]:
    """What a confined local server must read to start at all, opened read-only: the install its program lives in
    (a virtualenv or a node prefix: the folder above `bin/`; and where its link leads) and the folders of the files
    its command names (`server.py`) — never a folder of the person's home by implication (a `--config
    ~/Documents/x.json` opened all of ~/Documents): those they name with --folder. A virtualenv in the home is
    the exception (its program cannot start without it), and the home's toolchains (~/.pyenv…) are the sandbox's
    anyway. The caller also drops any that a policy refuses (a credential folder)."""
    import shutil

    home = (home or Path.home()).resolve()
    found: list[Path] = []
    for index, arg in enumerate(argv):
        located = shutil.which(arg) if index == 0 and "/" not in arg else arg
        if not located or not Path(located).is_absolute() or not Path(located).exists():
            continue
        paths = [Path(located)]
        if index == 0:  # a virtualenv's python is a link into an install elsewhere (pyenv, /usr/local): that too
            paths.append(Path(located).resolve())
        for path in paths:
            folder = path if path.is_dir() else path.parent
            if folder.name == "bin" and index == 0:
                folder = folder.parent
            folder = folder.resolve()
            if folder == home or home in folder.parents:
                if not (index == 0 and (folder / "pyvenv.cfg").is_file()):
                    continue
            if folder not in found:
                found.append(folder)
    return found


def parse_pairs(items: Sequence[str], what: str) -> dict[str, str]:
    """`K=V` items from a command line."""
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"{what} {item!r}: write NAME=VALUE")
        pairs[key.strip()] = value
    return check_pairs(pairs, what)


class Connectors:
    def __init__(self, path: Path, vault: Vault | None) -> None:
        self.path = path
        self.vault = vault

    def load(self) -> dict[str, Connector]:
        try:
            raw = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise ConfigError(f"{self.path} cannot be read ({type(e).__name__}): fix or remove it") from e
        found = {}
        for item in raw.get("connectors", []):
            known = {k: v for k, v in item.items() if k in Connector.__dataclass_fields__}
            connector = Connector(**known)
            found[connector.id] = connector
        return found

    def _save(self, connectors: Mapping[str, Connector]) -> None:
        data = {"version": 1, "connectors": [asdict(c) for c in connectors.values()]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())

    def get(self, name_or_id: str) -> Connector:
        connectors = self.load()
        ident = name_or_id if name_or_id.startswith("custom-") else slug(name_or_id)
        if ident not in connectors:
            raise NotFound(f"no connector {name_or_id!r}: `orkas mcp list` shows them")
        return connectors[ident]

    def add(
        self,
        name: str,
        *,
        url: str | None = None,
        command: str | Sequence[str] | None = None,
        headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        oauth: bool = False,
        unconfined: bool = False,
        folders: Sequence[str] = (),
    ) -> Connector:
        """Check everything, then write: the values into the vault, the rest into connectors.json."""
        connector, headers, env = self.prepare(
            name,
            url=url,
            command=command,
            headers=headers,
            env=env,
            cwd=cwd,
            oauth=oauth,
            unconfined=unconfined,
            folders=folders,
        )
        if (headers or env) and self.vault is None:
            raise ConfigError("secrets need the vault, which cannot be opened here")
        for key, value in headers.items():
            assert self.vault is not None
            self.vault.set(f"connector:{connector.id}:header:{key}", value)
        for key, value in env.items():
            assert self.vault is not None
            self.vault.set(f"connector:{connector.id}:env:{key}", value)
        connectors = self.load()
        connectors[connector.id] = connector
        self._save(connectors)
        return connector

    def prepare(
        self,
        name: str,
        *,
        url: str | None = None,
        command: str | Sequence[str] | None = None,
        headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        oauth: bool = False,
        unconfined: bool = False,
        folders: Sequence[str] = (),
    ) -> tuple[Connector, dict[str, str], dict[str, str]]:
        """Everything `add` checks, nothing written: the connector and its checked (headers, env)."""
        ident = slug(name)
        if (url is None) == (command is None):
            raise ConfigError("give either --url (a remote server) or --command (a local one)")
        connectors = self.load()
        if ident in connectors:
            taken = connectors[ident].name
            raise ConfigError(f"a connector named {taken!r} exists: remove it first, or choose another name")
        headers = check_pairs(headers or {}, "header")
        env = check_pairs(env or {}, "env")
        argv: list[str] = []
        if url is not None:
            url = check_url(url)
            if env or cwd:
                raise ConfigError("--env and --cwd are for a local server (--command)")
            if folders or unconfined:
                raise ConfigError("--folder and --unconfined are for a local server (--command)")
            if oauth and any(key.lower() == "authorization" for key in headers):
                raise ConfigError("--oauth signs in for you: leave out the Authorization header")
        else:
            argv = shlex.split(command) if isinstance(command, str) else list(command or [])
            if not argv or not argv[0].strip():
                raise ConfigError("--command is empty")
            if headers:
                raise ConfigError("--header is for a remote server (--url)")
            if oauth:
                raise ConfigError("--oauth is for a remote server (--url): a local one is started, not signed in to")
            if cwd is not None and not Path(cwd).is_dir():
                raise ConfigError(f"--cwd {cwd!r} is not a folder")
            if unconfined and folders:
                raise ConfigError("--folder is for a confined server: an unconfined one sees everything you can")
        named = [self._folder(folder) for folder in folders]
        connector = Connector(
            ident,
            name.strip(),
            url,
            argv,
            cwd,
            sorted(headers),
            sorted(env),
            oauth=oauth,
            confined=url is None and not unconfined,
            folders=named,
        )
        return connector, headers, env

    def _folder(self, folder: str) -> str:
        """A folder the person names for a confined server, checked as the sandbox will check it: never the home
        or the whole disk, a credential or system folder, or Orkas's data."""
        from orkas.engine.sandbox import PathDenied, PathPolicy

        path = Path(folder).expanduser()
        if not path.is_absolute():
            raise ConfigError(f"the folder {folder!r}: give its whole path")
        if not path.is_dir():
            raise ConfigError(f"{folder!r} is not a folder")
        resolved = path.resolve()
        if resolved == Path(resolved.anchor) or resolved == Path.home().resolve():
            raise ConfigError(f"{folder!r}: not the whole disk or the whole home; name the folders it needs")
        try:
            PathPolicy.source(resolved, protected=[self.path.parent])
        except PathDenied as e:
            raise ConfigError(f"the folder {folder!r}: {e}") from None
        return str(resolved)

    def secrets(self, connector: Connector) -> tuple[dict[str, str], dict[str, str]]:
        """(headers, env) with their values, from the vault: only when connecting."""
        if self.vault is None:
            return {}, {}
        headers = {k: self.vault.get(f"connector:{connector.id}:header:{k}") or "" for k in connector.headers}
        env = {k: self.vault.get(f"connector:{connector.id}:env:{k}") or "" for k in connector.env}
        for value in [*headers.values(), *env.values()]:
            if len(value) >= 8:  # a token, not a flag like "1": redacted from every log and bundle from now on
                remember_secret(value)
        return headers, env

    def remove(self, name_or_id: str) -> Connector:
        connector = self.get(name_or_id)
        connectors = self.load()
        del connectors[connector.id]
        self._save(connectors)
        if self.vault is not None:
            for key in connector.headers:
                self.vault.delete(f"connector:{connector.id}:header:{key}")
            for key in connector.env:
                self.vault.delete(f"connector:{connector.id}:env:{key}")
            for kind in ("tokens", "client"):  # a sign-in (signin.py), whether or not it is still used
                self.vault.delete(f"connector:{connector.id}:oauth:{kind}")
        return connector

    def set_oauth(self, name_or_id: str, oauth: bool) -> Connector:
        """A remote server found to want a sign-in (or no longer): from now on it is reached with its tokens."""
        connector = self.get(name_or_id)
        if oauth and connector.url is None:
            raise ConfigError(f"{connector.name} is a local server: it is started, not signed in to")
        connectors = self.load()
        connectors[connector.id].oauth = oauth
        self._save(connectors)
        return connectors[connector.id]

    def set_enabled(self, name_or_id: str, enabled: bool) -> Connector:
        connector = self.get(name_or_id)
        connectors = self.load()
        connectors[connector.id].enabled = enabled
        self._save(connectors)
        return connectors[connector.id]


def claude_desktop_entries(text: str) -> list[dict[str, Any]]:
    """The servers of a Claude-Desktop-style `{"mcpServers": {name: {command, args, env} | {url, headers}}}`;
    an entry that is neither comes with an `error`."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ConfigError(f"not JSON: {e}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError('no "mcpServers" table in it')
    entries = []
    for name, spec in servers.items():
        if not isinstance(spec, dict):
            entries.append({"name": name, "error": "expected a table"})
        elif spec.get("url"):
            entries.append({"name": name, "url": str(spec["url"]), "headers": dict(spec.get("headers") or {})})
        elif spec.get("command"):
            argv = [str(spec["command"]), *[str(a) for a in spec.get("args") or []]]
            entries.append({"name": name, "command": argv, "env": dict(spec.get("env") or {}), "cwd": spec.get("cwd")})
        else:
            entries.append({"name": name, "error": "neither a command nor a url"})  # said, and the others come in
    return entries

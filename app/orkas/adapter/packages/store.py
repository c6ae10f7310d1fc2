"""External packages: a git repository (or a local folder) hosted verbatim under `<data>/packages/<name>/`.

    install SOURCE [--name N]   clone --depth 1 into a staging folder, check it, then one rename into place
    update NAME                 the same from the recorded source; the old copy stays until the new one passed
    remove | enable | disable   the folder, its skills and its command shims

Sources: `https://` and `ssh://` git URLs, `git@host:path`, a local folder or repository. Refused with the
reason: `ext::`/`fd::` and other transports, a URL carrying credentials, plain `http://`, a URL that names
an archive or a web page rather than a repository. Cloning runs through the one executor: confined with the
network for https, confined without it for a local source (mounted read-only), outside the sandbox only for
ssh (it needs the person's keys and agent). Git never prompts, never follows submodules, never runs `ext::`.

A package is kept only when it is a skill package (`SKILL.md` at its top, in `skills/*/` or
`.claude/skills/*/`), a command package (`[project.scripts]` in pyproject.toml, `bin` in package.json), or
both; with no symbolic link anywhere in it (a link could lead a confined command to a file outside). The
registry (`<data>/package-registry.json`) lives outside the packages so a later update never conflicts
with it. Commands become shims in `<data>/packages/.bin/`, at the end of the PATH of the commands the person
approved (never of a command nobody approved, and never before a system command of the same name); the
classifier counts each as a program. Dependencies (`pip` into the package's own `.venv`, `npm ci`) are
installed only with the person's consent, asked once and remembered per package; a package's node commands
(whose code runs with its node_modules) get shims only with that same consent.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import shutil
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from orkas.adapter.packages.sources import (
    Entry,
    Package,
    PackageError,
    Source,
    check_name,
    check_source,
    detect,
    name_from,
    refuse_links,
)
from orkas.core.errors import ConfigError, NotFound
from orkas.core.fsutil import atomic_write, replace_folder
from orkas.engine.sandbox import PathDenied, PathPolicy

if TYPE_CHECKING:  # made by the caller when a package is installed or run
    from orkas.engine.sandbox.executor import Executor

log = logging.getLogger(__name__)

CLONE_TIMEOUT = 600


class Packages:
    """The installed packages: the registry, the folders, the shims. `executor_for(workspace, readable)`
    gives the one executor rooted at a staging folder (the composition root binds it)."""

    def __init__(
        self,
        data: Path,
        executor_for: Callable[[Path, list[Path]], Executor],
        protected: Callable[[], list[Path]] = lambda: [],
        ssh_agent: str | None = None,
    ) -> None:
        self.folder = data / "packages"
        self.bin = self.folder / ".bin"
        self.registry_file = data / "package-registry.json"
        self._executor_for = executor_for
        self._protected = protected
        self.ssh_agent = ssh_agent  # the person's ssh agent, for ssh:// sources (their own explicit install)

    # ---- the registry ----
    def load(self) -> dict[str, Package]:
        try:
            raw = json.loads(self.registry_file.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise ConfigError(f"{self.registry_file} cannot be read ({type(e).__name__}): fix or remove it") from e
        packages = {}
        for name, item in (raw.get("packages") or {}).items():
            entries = [Entry(**e) for e in item.pop("entries", [])]
            packages[name] = Package(
                **{k: v for k, v in item.items() if k in Package.__dataclass_fields__}, entries=entries
            )
        return packages

    def _save(self, packages: dict[str, Package]) -> None:
        data = {"version": 1, "packages": {n: p.public() for n, p in sorted(packages.items())}}
        atomic_write(self.registry_file, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())

    def _put(self, package: Package) -> None:
        """Record one package (under the lock: the caller holds it)."""
        packages = self.load()
        packages[package.name] = package
        self._save(packages)

    def get(self, name: str) -> Package:
        package = self.load().get(name)
        if package is None:
            raise _missing(name)
        return package

    # ---- install, update ----
    async def install(
        self, text: str, *, name: str | None = None, consent: Callable[[Package], Awaitable[bool]] | None = None
    ) -> Package:
        """Clone, check and keep a package. `consent` is asked (once) whether to install its dependencies."""
        source = check_source(text)
        name = check_name(name) if name else name_from(source)
        if name in self.load() or (self.folder / name).exists():
            raise PackageError(f"a package named {name!r} is installed already: update it, or choose --name")
        staging = await self._fetch(source, name)
        try:
            kind, roots, entries, deps = detect(staging, name)
            commit = await self._commit(staging)
            now = _now()
            package = Package(name, source.text, commit, kind, roots, entries, deps, None, True, now, now)
            with self._locked():  # another install of this name (the CLI, the app) may have finished meanwhile
                if name in self.load() or (self.folder / name).exists():
                    raise PackageError(f"a package named {name!r} was installed meanwhile")
                os.rename(staging, self.folder / name)
                self._put(package)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        await self._dependencies(package, consent)
        with self._locked():
            self._write_shims()
        log.info("package %s installed (%s, %d skills, %d commands)", name, kind, len(roots), len(entries))
        return package

    async def update(self, name: str, consent: Callable[[Package], Awaitable[bool]] | None = None) -> Package:
        """The recorded source cloned again; the old copy is replaced only once the new one passed every check."""
        old = self.get(name)
        staging = await self._fetch(check_source(old.source), name)
        target = self.folder / name
        aside = self.folder / f".old-{name}-{uuid.uuid4().hex[:8]}"
        try:
            kind, roots, entries, deps = detect(staging, name)
            commit = await self._commit(staging)
            with self._locked():
                packages = self.load()
                current = packages.get(name)
                if current is None:
                    raise PackageError(f"the package {name!r} was removed meanwhile")
                old_copy = replace_folder(staging, target, aside)
                package = Package(
                    name, old.source, commit, kind, roots, entries, deps,
                    current.deps_consent, current.enabled, current.installed_at, _now(),
                )  # fmt: skip
                packages[name] = package
                self._save(packages)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        shutil.rmtree(old_copy, ignore_errors=True)
        await self._dependencies(package, consent)
        with self._locked():
            self._write_shims()
        return package

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Registry changes one at a time across processes (the app and `orkas packages` in a terminal)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder.parent / "package-registry.lock", "a") as handle:
            try:
                import fcntl

                fcntl.flock(handle, fcntl.LOCK_EX)
            except ImportError:  # pragma: no cover - Windows: one process at a time in practice
                pass
            yield

    async def _fetch(self, source: Source, name: str) -> Path:
        """A checked copy of the source in a staging folder beside the packages (removed on any failure)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        staging = self.folder / f".staging-{name}-{uuid.uuid4().hex[:8]}"
        try:
            if source.local is not None and not (source.local / ".git").exists():
                self._check_local(source.local)
                refuse_links(source.local)
                shutil.copytree(source.local, staging, symlinks=True)
            else:
                await self._clone(source, staging)
                shutil.rmtree(staging / ".git" / "hooks", ignore_errors=True)  # samples only; never run anyway
            refuse_links(staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return staging

    async def _clone(self, source: Source, staging: Path) -> None:
        readable = [source.local] if source.local is not None else []
        if source.local is not None:
            self._check_local(source.local)
        executor = self._executor_for(self.folder, readable)
        file_rule = "always" if source.kind == "local" else "never"
        command = (
            "git -c protocol.ext.allow=never -c protocol.fd.allow=never "
            f"-c protocol.file.allow={file_rule} -c core.symlinks=true -c core.hooksPath=/dev/null "
            "clone --quiet --depth 1 --single-branch --no-recurse-submodules --no-tags "
            f"-- {shlex.quote(source.clone_url)} {shlex.quote(str(staging))}"
        )
        env = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "/bin/false", "GIT_CONFIG_NOSYSTEM": "1"}
        if source.kind == "ssh":
            env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new"
            if self.ssh_agent:
                env["SSH_AUTH_SOCK"] = self.ssh_agent
        result = await executor.run(
            command,
            cwd=self.folder,
            timeout=CLONE_TIMEOUT,
            env=env,
            network=source.kind == "https",
            unconfined=source.kind == "ssh",  # the person's ssh keys and agent: their own explicit command
            writable=True,  # the person asked for this package: the clone writes its staging folder
        )
        if result.exit_code != 0 or not staging.is_dir():
            said = result.output.strip().splitlines()[-1:] or ["no output"]
            raise PackageError(f"cloning {source.text} failed: {said[0][:300]}")

    def _check_local(self, folder: Path) -> None:
        try:
            PathPolicy.source(folder, protected=self._protected())
        except PathDenied as e:
            raise PackageError(f"{folder} cannot be used: {e.reason}") from None

    async def _commit(self, staging: Path) -> str:
        head = staging / ".git" / "HEAD"
        if not head.is_file():
            return ""
        text = head.read_text().strip()
        if text.startswith("ref: "):
            ref = staging / ".git" / text[5:]
            if ref.is_file():
                return ref.read_text().strip()
            packed = staging / ".git" / "packed-refs"
            for line in packed.read_text().splitlines() if packed.is_file() else []:
                if line.endswith(text[5:]):
                    return line.split()[0]
            return ""
        return text

    # ---- dependencies ----
    async def _dependencies(self, package: Package, consent: Callable[[Package], Awaitable[bool]] | None) -> None:
        if package.deps is None and not _node_commands(package):
            return
        if package.deps_consent is None:
            answer = await consent(package) if consent is not None else False
            package.deps_consent = answer
            with self._locked():
                packages = self.load()
                if package.name in packages:
                    packages[package.name].deps_consent = answer
                    self._save(packages)
        if package.deps_consent and package.deps is not None:
            await self.install_dependencies(package)

    async def install_dependencies(self, package: Package) -> None:
        folder = self.folder / package.name
        executor = self._executor_for(self.folder, [])
        if package.deps == "npm":
            command = "npm ci --ignore-scripts --no-audit --no-fund"
        else:
            wanted = "-r requirements.txt" if (folder / "requirements.txt").is_file() else "."
            command = f"python3 -m venv .venv && .venv/bin/python -m pip install --quiet {wanted}"
        result = await executor.run(command, cwd=folder, timeout=CLONE_TIMEOUT, network=True, writable=True)
        if result.exit_code != 0:
            said = result.output.strip().splitlines()[-1:] or ["no output"]
            raise PackageError(f"installing the dependencies of {package.name} failed: {said[0][:300]}")

    def set_consent(self, name: str, consent: bool) -> Package:
        with self._locked():
            packages = self.load()
            package = packages.get(name) or self.get(name)
            package.deps_consent = consent
            self._save(packages)
            self._write_shims()  # its node commands run only with this consent
        return package

    # ---- remove, enable, disable ----
    def remove(self, name: str) -> None:
        with self._locked():
            packages = self.load()
            if name not in packages:
                raise _missing(name)
            del packages[name]
            self._save(packages)
            shutil.rmtree(self.folder / name, ignore_errors=True)
            self._write_shims()

    def set_enabled(self, name: str, enabled: bool) -> Package:
        with self._locked():
            packages = self.load()
            if name not in packages:
                raise _missing(name)
            packages[name].enabled = enabled
            self._save(packages)
            self._write_shims()
        return packages[name]

    # ---- what the rest of the app uses ----
    def skill_roots(self) -> list[tuple[str, Path, bool]]:
        """(package name, folder, single) of every enabled package's skills: `single` when the folder is itself
        one skill (SKILL.md at the package's top)."""
        found = []
        for package in self.load().values() if self.registry_file.exists() else []:
            if package.enabled:
                for relative in package.skill_roots:
                    found.append((package.name, self.folder / package.name / relative, True))
        return found

    def _write_shims(self) -> None:
        """One small sh script per command of every enabled package; nothing else in `.bin`."""
        self.bin.mkdir(parents=True, exist_ok=True)
        wanted: dict[str, str] = {}
        for package in self.load().values():
            if not package.enabled:
                continue
            root = self.folder / package.name
            for entry in package.entries:
                if entry.runtime != "python" and not package.deps_consent:
                    continue  # a node command runs the package's code with its dependencies: only with consent
                if entry.name not in wanted:
                    wanted[entry.name] = _shim(root, entry)
        for old in self.bin.iterdir():
            if old.name not in wanted:
                old.unlink()
        for command, text in wanted.items():
            atomic_write(self.bin / command, text.encode(), mode=0o755)


def _shim(root: Path, entry: Entry) -> str:
    q = shlex.quote
    head = f"#!/bin/sh\n# {entry.name}: a command of package {root.name} (made by Orkas)\n"
    if entry.runtime != "python":
        return head + f'exec node {q(str(root / entry.target))} "$@"\n'
    module, function = entry.target.split(":", 1)
    first, _, rest = function.partition(".")
    source = root / "src" if (root / "src").is_dir() else root
    run = (
        f"import sys; sys.path.insert(0, {str(source)!r}); from {module} import {first} as f; "
        f"sys.argv[0] = {entry.name!r}; sys.exit(f{'.' + rest if rest else ''}())"
    )
    python = q(str(root / ".venv" / "bin" / "python"))
    interpreter = f'"$( [ -x {python} ] && echo {python} || echo python3)"'
    return head + f'exec {interpreter} -c {q(run)} "$@"\n'


def dependency_question(package: Package | object) -> str:
    """The one question a package's code asks before it may run: its dependencies, and its node commands."""
    name = getattr(package, "name", "")
    deps = getattr(package, "deps", None)
    node = [e.name for e in getattr(package, "entries", []) if e.runtime != "python"]
    how = "pip into its own .venv" if deps == "pip" else "npm ci in its folder"
    parts = [f"install the dependencies of {name} ({how}, from the network)"] if deps else []
    if node:
        parts.append(f"let its node commands ({', '.join(node)}) run")
    return (" and ".join(parts) or f"use {name}").capitalize() + "?"


def _node_commands(package: Package) -> list[Entry]:
    return [e for e in package.entries if e.runtime != "python"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _missing(name: str) -> NotFound:
    return NotFound(f"no package {name!r}: `orkas packages list` shows them")

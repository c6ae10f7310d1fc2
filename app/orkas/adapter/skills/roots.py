"""Where skills come from: the roots by tier and priority, what each holds, and who may use what.

Roots, highest priority first (same name twice: the first wins, the other is listed as shadowed):

    bundled   shipped in the app                                 trusted
    custom    <data>/skills/ — the person's own and saved ones   trusted
    agent     <data>/agents/<name>/skills/ — one agent's          trusted, that agent only
    learned   <data>/learned/<name>/skills/ — self-evolution's   trusted, that agent only
    package   enabled external packages (adapter/packages/store.py)    open
    global    ~/.claude/skills, ~/.codex/skills, ~/.agents/skills and folders added in Settings    open

Open-tier skills are other people's text: read, never rewritten; symbolic links and dot-folders are
skipped with a reason; their names and descriptions pass the memory guard, and one that fails is
quarantined (listed with the reason, never advertised). They are offered to the commander only, never to
a member's allow-list. `<data>/skills.json` holds the person's switches: global folders on or off (all,
or one by one), folders they added, skills they disabled.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from orkas.adapter.skills.cache import CACHE_VERSION, Parsed, from_json, parse_head, to_json
from orkas.adapter.skills.records import COMMANDER, GLOBAL_FOLDERS, PENDING, Guard, Record, Root, touch_learned
from orkas.adapter.skills.settings import SettingsFile
from orkas.core.errors import ConfigError
from orkas.core.fsutil import atomic_write
from orkas.engine.sandbox import PathDenied, PathPolicy
from orkas.engine.skills.format import FILE, MAX_FILE
from orkas.engine.skills.library import Catalog, Meaning, Skill

if TYPE_CHECKING:
    from orkas.adapter.packages.store import Packages

log = logging.getLogger(__name__)


class SkillRegistry:
    """Every skill root, scanned into records; a `Catalog` per agent. Thread-safe: the watcher rescans
    on its thread while turns read. `version` grows with every change a scan finds."""

    def __init__(
        self,
        data: Path,
        *,
        home: Path,
        bundled: Path | None,
        packages: Callable[[], Sequence[Root]] = lambda: (),
        agents: Callable[[], Iterable[str]] = lambda: (),
        protected: Callable[[], Sequence[Path]] = lambda: (),
        guard: Guard | None = None,
    ) -> None:
        self.data = data
        self.home = home
        self.bundled = bundled
        self.custom = data / "skills"
        self.settings_file = SettingsFile(data / "skills.json")
        self._packages = packages
        self._agents = agents
        self._protected = protected
        self._guard = guard
        self._lock = threading.RLock()
        self._scanning = threading.Lock()
        self._parsed: dict[Path, Parsed] = {}
        self._dirty = False
        self.cache_file = data / "cache" / "skills.json"
        self._records: list[Record] = []
        self._skills: dict[str, Skill] = {}  # path → skill, for the usable records
        self._listeners: list[Callable[[int], None]] = []
        self.version = 0
        self.scanned = False
        self.meaning: Meaning | None = None  # the knowledge base's search over skills, once the product has one
        self.packages: Packages | None = None  # the installed packages, when the product wires them
        self.roots_seen: list[Root] = []

    # ---- roots ----
    def roots(self) -> list[Root]:
        settings = self.settings_file.load()
        roots: list[Root] = []
        if self.bundled is not None:
            roots.append(Root("bundled", self.bundled, "bundled"))
        roots.append(Root("custom", self.custom, "custom"))
        for agent in sorted(set(self._agents()) | {COMMANDER}):
            roots.append(Root("agent", self.data / "agents" / agent / "skills", f"agent {agent}", owner=agent))
        for agent in sorted(set(self._agents()) | {COMMANDER}):
            roots.append(Root("learned", self.data / "learned" / agent / "skills", f"learned {agent}", owner=agent))
        roots += list(self._packages())
        for folder in [*GLOBAL_FOLDERS, *settings.folders]:
            enabled = settings.global_enabled and folder not in settings.off
            roots.append(Root("global", self.expand(folder), folder, enabled=enabled))
        return roots

    def expand(self, folder: str) -> Path:
        return self.home / folder[2:] if folder.startswith("~/") else Path(folder)

    def check_folder(self, folder: str) -> Path:
        """A folder the person wants to add as a global root. Raises ConfigError saying why it cannot be."""
        path = self.expand(folder.strip())
        if not path.is_absolute():
            raise ConfigError(f"{folder!r}: give a full path (or one starting with ~/)")
        try:
            PathPolicy.source(path, protected=self._protected(), home=self.home)
        except PathDenied as e:
            raise ConfigError(f"{folder!r} cannot hold skills: {e.reason}") from None
        if not path.is_dir():
            raise ConfigError(f"{folder!r} is not a folder")
        return path

    # ---- scanning ----
    def refresh(self) -> bool:
        """Scan every root again (unchanged SKILL.md files are not parsed twice). Returns whether
        anything a person or an agent would see changed; listeners hear of it."""
        with self._scanning:  # one scan at a time: an older scan never lands after a newer one
            return self._refresh()

    def _refresh(self) -> bool:
        if not self.scanned and not self._parsed:
            self._parsed = self._load_cache()
        roots = self.roots()
        settings = self.settings_file.load()
        found: list[tuple[Root, Path, Skill | None, str | None]] = []
        seen: set[Path] = set()
        for root in roots:
            for folder, skill, problem in self._scan_root(root):
                seen.add(folder)
                found.append((root, folder, skill, problem))
        records, usable = self._resolve(found, set(settings.disabled))
        for stale in set(self._parsed) - seen:
            del self._parsed[stale]
            self._dirty = True
        if self._dirty:
            self._save_cache()
        with self._lock:
            changed = records != self._records
            self._records, self._skills, self.roots_seen = records, usable, roots
            self.scanned = True
            if changed:
                self.version += 1
            version, listeners = self.version, list(self._listeners)
        if changed:
            for listener in listeners:
                listener(version)
        return changed

    # The parsed frontmatter of every SKILL.md, kept between starts by file identity (inode, size, mtime):
    # a start where nothing changed parses nothing (and never loads the YAML parser).
    def _load_cache(self) -> dict[Path, Parsed]:
        try:
            raw = orjson.loads(self.cache_file.read_bytes())
            if raw.get("version") != CACHE_VERSION:
                return {}
            return {Path(k): from_json(v) for k, v in raw["skills"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return {}  # no cache, or not ours to trust: parse again

    def _save_cache(self) -> None:
        data = {"version": CACHE_VERSION, "skills": {str(k): to_json(v) for k, v in self._parsed.items()}}
        try:
            self.cache_file.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.cache_file, orjson.dumps(data, default=str))
            self._dirty = False
        except OSError as e:
            log.warning("cannot keep the skills' cache: %s", e.strerror)

    def _scan_root(self, root: Root) -> Iterable[tuple[Path, Skill | None, str | None]]:
        if not root.enabled:
            return
        if root.single:
            yield self._load(root, root.path)
            return
        try:
            info = os.stat(root.path)  # the root itself may be a link the person made (a dotfiles repo)
        except OSError:
            return
        if not stat.S_ISDIR(info.st_mode):
            return
        if not root.trusted and self._refused_root(root.path):  # e.g. a link to the home folder or ~/.ssh
            yield root.path, None, "skipped: the folder is, holds or lies in a protected place (links are resolved)"
            return
        try:
            entries = sorted(os.scandir(root.path), key=lambda e: e.name)
        except OSError as e:
            log.warning("cannot list skills in %s: %s", root.origin, e.strerror)
            return
        for entry in entries:
            folder = Path(entry.path)
            if entry.name.startswith("."):
                continue  # dot-folders: caches, VCS, other tools' private state
            if entry.is_symlink():
                yield folder, None, "skipped: a symbolic link (links are not followed)"
            elif entry.is_dir(follow_symlinks=False):
                yield self._load(root, folder)

    def _refused_root(self, path: Path) -> bool:
        try:
            PathPolicy.source(path, protected=self._protected(), home=self.home)
        except PathDenied:
            return True
        return False

    def _load(self, root: Root, folder: Path) -> tuple[Path, Skill | None, str | None]:
        manifest = folder / FILE
        try:
            info = os.lstat(manifest)
        except FileNotFoundError:
            return folder, None, "skipped: no SKILL.md in it"
        except OSError as e:
            return folder, None, f"skipped: {e.strerror}"
        if stat.S_ISLNK(info.st_mode):
            return folder, None, "skipped: SKILL.md is a symbolic link (links are not followed)"
        if not stat.S_ISREG(info.st_mode):
            return folder, None, "skipped: SKILL.md is not a regular file"
        if info.st_size > MAX_FILE:
            return folder, None, f"skipped: SKILL.md is larger than {MAX_FILE // 1024} KB"
        stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
        cached = self._parsed.get(folder)
        if cached is not None and cached.stamp == stamp:
            text, problem = cached.text, cached.problem
        else:
            text, problem = parse_head(manifest, folder.name)
            self._parsed[folder] = Parsed(stamp, text, problem)
            self._dirty = True
        if text is None:
            return folder, None, problem
        if root.owner is not None:
            text = replace(text, owner=root.owner)
        return folder, Skill(text=text, tier=root.tier, folder=folder, origin=root.origin), None

    def _resolve(
        self, found: list[tuple[Root, Path, Skill | None, str | None]], disabled: set[str]
    ) -> tuple[list[Record], dict[str, Skill]]:
        """Shadowing, the guard and the person's switches, in priority order."""
        winners: dict[tuple[str | None, str], str] = {}  # (owner or None, name) → path of the first
        records: list[Record] = []
        usable: dict[str, Skill] = {}
        for root, folder, skill, problem in found:
            if skill is None:
                records.append(
                    Record(
                        name=folder.name,
                        tier=root.tier,
                        path=str(folder),
                        origin=root.origin,
                        trusted=root.trusted,
                        skipped=True,
                        reason=problem,
                        owner=root.owner,
                    )
                )
                continue
            text = skill.text
            key = text.name.casefold()
            winner = winners.get((None, key)) or (winners.get((text.owner, key)) if text.owner else None)
            quarantine = None if root.trusted else self._check(text.name, text.description, text.descriptions)
            record = Record(
                name=text.name,
                tier=root.tier,
                path=str(folder),
                origin=root.origin,
                trusted=root.trusted,
                description=text.description,
                descriptions=dict(text.descriptions),
                owner=text.owner,
                enabled=str(folder) not in disabled,
                shadowed=winner is not None,
                shadowed_by=winner,
                quarantined=quarantine is not None and quarantine != PENDING,
                checking=quarantine == PENDING,
                reason=quarantine if quarantine != PENDING else None,
                tags=text.tags,
                last_used=str(text.meta["lastUsedAt"]) if text.meta.get("lastUsedAt") else None,
            )
            records.append(record)
            if winner is None and not record.quarantined:
                winners[(text.owner, key)] = str(folder)
            if record.usable:
                usable[str(folder)] = skill
        return records, usable

    def _check(self, name: str, description: str, descriptions: dict[str, str]) -> str | None:
        if self._guard is None:
            return None
        return self._guard("\n".join([name, description, *descriptions.values()]))

    def ensure(self) -> None:
        """Scan once if nothing has been scanned yet (the server scans on a thread after it starts)."""
        if not self.scanned:
            self.refresh()

    # ---- what people and agents see ----
    def records(self) -> list[Record]:
        with self._lock:
            return list(self._records)

    def find(self, name: str) -> list[Record]:
        """Every record with this name (the winner first), or those whose path is `name`."""
        key = name.strip().casefold()
        return [r for r in self.records() if r.name.casefold() == key or r.path == name]

    def catalog(
        self,
        agent: str | None = None,
        *,
        allowed: Sequence[str] | None = None,
        meaning: Meaning | None = None,
    ) -> Catalog:
        """The skills one agent may use. `agent` None is the commander (or a one-agent chat): every
        trusted skill that is not another agent's, and the open tier. A member gets the trusted skills
        that are shared or its own, narrowed to `allowed` when its AGENT.md lists skills; the open tier
        never reaches a member, whatever its list says."""
        me = agent or COMMANDER
        with self._lock:
            skills = list(self._skills.values())
        chosen: list[Skill] = []
        for skill in skills:
            owner = skill.text.owner
            if owner is not None and owner != me:
                continue
            if not skill.trusted and agent is not None:
                continue
            if allowed is not None and skill.name not in allowed:
                continue
            chosen.append(skill)
        return Catalog(chosen, meaning=meaning or self.meaning, on_read=self.touch)

    def all_usable(self) -> list[Skill]:
        """Every skill some agent may use (the search index holds these)."""
        with self._lock:
            return list(self._skills.values())

    def folders_for(self, catalog: Catalog) -> list[Path]:
        """The folders a confined command may read (and run scripts from) for these skills: read-only."""
        return sorted({s.folder for s in catalog.skills})

    # ---- changes ----
    def listen(self, listener: Callable[[int], None]) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop

    def touch(self, skill: Skill) -> None:
        """A learned skill was read: its lastUsedAt says so (the lifecycle evicts the long unused)."""
        touch_learned(skill)

    def set_enabled(self, path: str, enabled: bool) -> Record:
        record = next((r for r in self.records() if r.path == path), None)
        if record is None:
            raise ConfigError(f"no skill at {path!r}")
        settings = self.settings_file.load()
        disabled = [p for p in settings.disabled if p != path]
        settings.disabled = disabled if enabled else [*disabled, path]
        self.settings_file.save(settings)
        self.refresh()
        return next(r for r in self.records() if r.path == path)

    def set_folder(self, folder: str, *, enabled: bool | None = None, add: bool = False, remove: bool = False) -> None:
        settings = self.settings_file.load()
        if add:
            self.check_folder(folder)
            if folder not in settings.folders and folder not in GLOBAL_FOLDERS:
                settings.folders.append(folder)
        if remove:
            if folder not in settings.folders:
                raise ConfigError(f"{folder!r} is not a folder you added (the usual ones can only be switched off)")
            settings.folders.remove(folder)
        if enabled is not None:
            settings.off = [f for f in settings.off if f != folder] + ([] if enabled else [folder])
        self.settings_file.save(settings)
        self.refresh()

    def set_global(self, enabled: bool) -> None:
        settings = self.settings_file.load()
        settings.global_enabled = enabled
        self.settings_file.save(settings)
        self.refresh()

"""`/api/skills`: every skill found in every root (the same records as `orkas skills list --json`), one
skill's text, the person's switches (a skill, a global folder, all global folders), folders they add,
and their own custom skills created and edited from the Skills screen."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from orkas.adapter.packages.store import Packages
from orkas.adapter.skills.custom import save_custom, skill_text, update_custom
from orkas.adapter.skills.roots import SkillRegistry
from orkas.core.errors import ConfigError
from orkas.engine.skills.format import MAX_BODY, MAX_DESCRIPTION, SkillFormatError
from orkas.server.answers import answered
from orkas.server.routing import Api, HTTPException


class Switch(BaseModel):
    path: str = Field(min_length=1, max_length=4096)
    enabled: bool


class Folder(BaseModel):
    folder: str = Field(min_length=1, max_length=4096)
    action: Literal["add", "remove", "on", "off"]


class GlobalSwitch(BaseModel):
    enabled: bool


class CustomSkill(BaseModel):
    name: str = Field(min_length=1, max_length=64)
    description: str = Field(min_length=1, max_length=MAX_DESCRIPTION)
    body: str = Field(min_length=1, max_length=MAX_BODY)


def listing(registry: SkillRegistry) -> dict[str, Any]:
    settings = registry.settings_file.load()
    roots = [
        {
            "tier": r.tier,
            "path": str(r.path),
            "origin": r.origin,
            "enabled": r.enabled,
            "exists": r.path.is_dir(),
            "added": r.tier == "global" and r.origin in settings.folders,
        }
        for r in registry.roots_seen
        if r.tier in ("custom", "global", "package")
    ]
    return {
        "skills": [r.public() for r in registry.records()],
        "roots": roots,
        "global_enabled": settings.global_enabled,
        "version": registry.version,
    }


def add_skills_routes(api: Api, registry: SkillRegistry) -> None:
    async def fresh() -> dict[str, Any]:
        await asyncio.to_thread(registry.ensure)
        return listing(registry)

    @api.get("/api/skills")
    async def skills_list() -> dict[str, Any]:
        return await fresh()

    @api.get("/api/skills/version")
    async def skills_version() -> dict[str, int]:
        """Grows with every change a scan finds: the Skills screen asks this each second, the list only on a change."""
        return {"version": registry.version}

    @api.get("/api/skills/show")
    async def skills_show(path: str) -> dict[str, Any]:
        record = next((r for r in registry.records() if r.path == path), None)
        if record is None:
            raise HTTPException(status_code=404, detail=f"no skill at {path!r}")
        with answered():
            text = await asyncio.to_thread(skill_text, Path(record.path))
        return {**record.public(), "text": text}

    @api.post("/api/skills/enabled")
    async def skills_enable(body: Switch) -> dict[str, Any]:
        with answered():
            record = await asyncio.to_thread(registry.set_enabled, body.path, body.enabled)
        return record.public()

    @api.post("/api/skills/folders")
    async def skills_folder(body: Folder) -> dict[str, Any]:
        with answered():
            await asyncio.to_thread(
                registry.set_folder,
                body.folder,
                add=body.action == "add",
                remove=body.action == "remove",
                enabled={"on": True, "off": False}.get(body.action, True if body.action == "add" else None),
            )
        return listing(registry)

    @api.post("/api/skills/global")
    async def skills_global(body: GlobalSwitch) -> dict[str, Any]:
        await asyncio.to_thread(registry.set_global, body.enabled)
        return listing(registry)

    @api.post("/api/skills", status_code=201)
    async def skills_create(body: CustomSkill) -> dict[str, Any]:
        try:
            folder = await asyncio.to_thread(save_custom, registry.custom, body.name, body.description, body.body, {})
        except SkillFormatError as e:
            raise HTTPException(status_code=400, detail=str(e)) from None
        await asyncio.to_thread(registry.refresh)
        return {"path": str(folder), **listing(registry)}

    @api.put("/api/skills/custom/{name}")
    async def skills_edit(name: str, body: CustomSkill) -> dict[str, Any]:
        if body.name != name:
            raise HTTPException(status_code=400, detail="a skill keeps its name; create a new one to rename")
        try:
            await asyncio.to_thread(update_custom, registry.custom, name, body.description, body.body)
        except SkillFormatError as e:
            raise HTTPException(status_code=400, detail=str(e)) from None
        except FileNotFoundError:
            raise HTTPException(status_code=404, detail=f"no custom skill {name!r}") from None
        await asyncio.to_thread(registry.refresh)
        return listing(registry)

    @api.delete("/api/skills/custom/{name}")
    async def skills_delete(name: str) -> dict[str, Any]:
        folder = registry.custom / name
        if "/" in name or name.startswith(".") or not (folder / "SKILL.md").is_file() or folder.is_symlink():
            raise HTTPException(status_code=404, detail=f"no custom skill {name!r}")
        with answered():
            await asyncio.to_thread(_remove, folder)
            await asyncio.to_thread(registry.refresh)
        return listing(registry)


class PackageSource(BaseModel):
    source: str = Field(min_length=1, max_length=4096)
    name: str | None = Field(default=None, max_length=48)
    dependencies: bool = False  # the person ticked "install its dependencies" on the form


class PackageSwitch(BaseModel):
    enabled: bool


def add_package_routes(api: Api, packages: Packages, registry: SkillRegistry) -> None:
    """`/api/packages`: the same as `orkas packages`, from the Skills screen. The form is the consent: the
    source is what the person typed, and dependencies install only when they ticked the box."""

    def listed() -> dict[str, Any]:
        with answered():
            return {"packages": [p.public() for p in packages.load().values()]}

    @api.get("/api/packages")
    async def packages_list() -> dict[str, Any]:
        return listed()

    @api.post("/api/packages", status_code=201)
    async def packages_install(body: PackageSource) -> dict[str, Any]:
        async def consent(_package: object) -> bool:
            return body.dependencies

        with answered():
            package = await packages.install(body.source, name=body.name or None, consent=consent)
        await asyncio.to_thread(registry.refresh)
        return {"package": package.public(), **listed()}

    @api.post("/api/packages/{name}/update")
    async def packages_update(name: str) -> dict[str, Any]:
        with answered():
            package = await packages.update(name)
        await asyncio.to_thread(registry.refresh)
        return {"package": package.public(), **listed()}

    @api.post("/api/packages/{name}/enabled")
    async def packages_enable(name: str, body: PackageSwitch) -> dict[str, Any]:
        with answered():
            await asyncio.to_thread(packages.set_enabled, name, body.enabled)
        await asyncio.to_thread(registry.refresh)
        return listed()

    @api.delete("/api/packages/{name}")
    async def packages_remove(name: str) -> dict[str, Any]:
        with answered():
            await asyncio.to_thread(packages.remove, name)
        await asyncio.to_thread(registry.refresh)
        return listed()


def _remove(folder: Path) -> None:
    try:
        shutil.rmtree(folder)
    except OSError as e:
        raise ConfigError(f"cannot remove {folder}: {e.strerror}") from None

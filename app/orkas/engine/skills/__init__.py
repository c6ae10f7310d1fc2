"""Skills: SKILL.md folders an agent reads on demand (format.py), the catalogue one agent may use with its
prompt index and search (library.py), and the tools skill_search, skill_read and skill_save (tools.py).
Where skills come from — roots, tiers, watching, quarantine — is the product's (adapter/skills/roots.py)."""

from orkas.engine.skills.format import SkillFormatError, SkillText, parse, render
from orkas.engine.skills.library import TIERS, TRUSTED, Catalog, Skill, Tier
from orkas.engine.skills.tools import SkillRead, SkillSave, SkillSearch

__all__ = [
    "TIERS",
    "TRUSTED",
    "Catalog",
    "Skill",
    "SkillFormatError",
    "SkillRead",
    "SkillSave",
    "SkillSearch",
    "SkillText",
    "Tier",
    "parse",
    "render",
]

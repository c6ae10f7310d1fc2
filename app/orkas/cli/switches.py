"""Turning memory and learning on and off from a terminal (`orkas memory enable`, `orkas evolve disable`): the
same preference the settings screen and the first-run offer change, through the one place that checks them."""

from __future__ import annotations

import asyncio
from typing import Literal

from orkas.app import Settings

Switch = Literal["memory", "learning"]
SAID: dict[Switch, tuple[str, str]] = {
    "memory": (
        "memory is on: Orkas keeps a short profile of you and notes about your work, shown to the agent in every "
        "chat; writes after the agent read anything but your own words ask you first",
        "memory is off: nothing is remembered across chats (what was kept stays in the data folder, unused)",
    ),
    "learning": (
        "learning is on: named agents reflect on their runs in the background, on a small model, and keep skills "
        "and a memo (Settings → Learning shows every change, with undo); Orkas itself never evolves",
        "learning is off: no run is counted and no agent reflects (what was learned stays, unused)",
    ),
}


def switch(settings: Settings, name: Switch, on: bool) -> int:
    from orkas.adapter.settings.preferences import change_preferences
    from orkas.adapter.settings.store import SettingsStore

    store = SettingsStore(settings.data_dir / "settings.json")
    asyncio.run(change_preferences(store, {name: on, "offered": True}))
    print(SAID[name][0 if on else 1])
    return 0


def state(settings: Settings, name: Switch) -> bool:
    from orkas.app import load_configured

    return bool(getattr(load_configured(settings).product.preferences, name))

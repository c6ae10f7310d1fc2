"""The folder a chat works in, as the person picked or typed it, checked before the chat is made.

"In a folder…" once made the chat first and let its first run refuse the folder (the home folder itself, say):
an empty "Untitled chat" was left behind. Now the window asks here first (POST /api/conversations/workspace),
and making the chat asks again, through the same path policy every run uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orkas.core.errors import ConfigError
from orkas.engine.sandbox import PathDenied, PathPolicy


def work_folder(chosen: Path, protected: Sequence[Path] = ()) -> Path:
    """The folder, resolved, when a chat may work in it: a full path ("~" expanded) to an existing folder that the
    path policy allows (not the home folder itself, a system or credential folder, or one holding the app's
    `protected` places). Raises ConfigError saying why (the policy's reason when it refuses). A relative path is
    refused: it would be read from wherever the server happens to run."""
    chosen = chosen.expanduser()
    if not chosen.is_absolute():
        raise ConfigError(f"{str(chosen)!r} is not a full path: type the whole path (~ stands for the home folder)")
    if not chosen.is_dir():
        raise ConfigError(f"{str(chosen)!r} is not a folder")
    try:
        return PathPolicy.source(chosen, protected=protected).workspace
    except PathDenied as e:
        raise ConfigError(f"{str(chosen)!r} cannot be a chat's folder: {e.reason}") from None

"""Safety for everything the agent touches: the path policy, command risk, the process executor."""

from typing import TYPE_CHECKING, Any

from orkas.engine.sandbox.paths import PathDenied, PathPolicy

if TYPE_CHECKING:
    from orkas.engine.sandbox.risk import classify_command
    from orkas.engine.sandbox.verdict import CommandRisk

__all__ = ["CommandRisk", "PathDenied", "PathPolicy", "classify_command"]


def __getattr__(name: str) -> Any:
    """The classifier on first use: its parser and rule tables are not needed to check a path."""
    if name == "classify_command":
        from orkas.engine.sandbox.risk import classify_command

        return classify_command
    if name == "CommandRisk":
        from orkas.engine.sandbox.verdict import CommandRisk

        return CommandRisk
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
